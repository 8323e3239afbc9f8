import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { EmailItem } from '../handler.js';
import { message } from '../testing/build.js';
import { parseEmail, registry, rejection } from '../testing/parse.js';

/**
 * An .emlx as Apple Mail writes one: the message's length on the first line (padded with
 * spaces), the message, then an XML property list whose `flags` hold Mail's bits for it.
 */
function emlx(body: Buffer, plist: Record<string, string>, lengthLine = `${body.length}       `): Buffer {
  const entries = Object.entries(plist)
    .map(([key, value]) => `\t<key>${key}</key>\n\t${value}\n`)
    .join('');
  return Buffer.concat([
    Buffer.from(`${lengthLine}\n`),
    body,
    Buffer.from(
      `<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n<plist version="1.0">\n<dict>\n${entries}</dict>\n</plist>\n`,
    ),
  ]);
}

const headers: Array<[string, string]> = [
  ['From', 'Karl <karl@example.org>'],
  ['To', 'Receiver <receiver@example.net>'],
  ['Subject', 'very simple'],
  ['Date', 'Fri, 29 Mar 2013 19:09:06 -0400'],
  ['Message-Id', '<4E83618E-BB56-404F-8595-87352648ADC7@example.org>'],
  ['Content-Type', 'text/plain; charset=us-ascii'],
  ['Mime-Version', '1.0 (Apple Message framework v1283)'],
];

const parseEmlx = async (bytes: Buffer, attributes: Record<string, unknown> = {}) =>
  (await registry.parse({ type: 'message/x-emlx', bytes, attributes })) as EmailItem;

describe('mail: Apple Mail .emlx files', () => {
  it('reads the message inside, and read and flagged from the flags after it (bits past 32 too)', async () => {
    const body = message(headers, 'The message itself.\n--\nKarl\n');
    // 2^33 + Mail's bits for a read message with an attachment count and priority: read, not flagged.
    const read = await parseEmlx(emlx(body, { flags: '<integer>8590195713</integer>' }));
    assert.equal(read.kind, 'email');
    assert.equal(read.identity, 'message-id:4e83618e-bb56-404f-8595-87352648adc7@example.org');
    assert.equal(read.title, 'very simple');
    assert.equal(read.occurredAt, '2013-03-29T23:09:06.000Z');
    assert.match(read.text, /The message itself\./);
    assert.doesNotMatch(read.text, /plist|<key>/);
    assert.deepEqual(read.meta.flags, { read: true, starred: false });

    const flaggedUnread = await parseEmlx(emlx(body, { flags: '<integer>16</integer>' }));
    assert.deepEqual(flaggedUnread.meta.flags, { read: false, starred: true });
    // The same message as an .eml is the same item.
    assert.equal((await parseEmail(body)).identity, read.identity);
  });

  it('a message without a date of its own is dated when Mail received it', async () => {
    const body = message(headers.filter(([name]) => name !== 'Date'));
    const item = await parseEmlx(
      emlx(body, { 'date-received': '<integer>1364598546</integer>', flags: '<integer>1</integer>' }),
    );
    assert.equal(item.occurredAt, '2013-03-29T23:09:06.000Z');
    assert.equal(item.meta.dateSource, 'received');
  });

  it("the importer's folder and flags win over the file's", async () => {
    const body = message(headers);
    const item = await parseEmlx(emlx(body, { flags: '<integer>17</integer>' }), { folder: 'Work', starred: false });
    assert.deepEqual(item.meta.flags, { read: true, starred: false });
    assert.deepEqual(item.meta.labels, ['Work']);
  });

  it('an .emlx sent as message/rfc822 (renamed .eml) is still unwrapped', async () => {
    const body = message(headers);
    const item = await parseEmail(emlx(body, { flags: '<integer>0</integer>' }, String(body.length)));
    assert.equal(item.title, 'very simple');
    assert.doesNotMatch(item.text, /<\/plist>/);
  });

  it('a truncated .emlx, and one without its length line, are rejected saying which', async () => {
    const body = message(headers);
    const truncated = emlx(body, {}).subarray(0, 200);
    assert.match(
      (await rejection(parseEmlx(truncated))).reason,
      /truncated Apple Mail \.emlx file: .* says the message is \d+ bytes/,
    );
    assert.match((await rejection(parseEmlx(body))).reason, /not an Apple Mail \.emlx file/);
  });
});
