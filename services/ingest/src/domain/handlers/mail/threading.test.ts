import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { normaliseMessageId, parseIdList } from './threading.js';
import { message } from '../testing/build.js';
import { parseEmail } from '../testing/parse.js';

describe('message ids', () => {
  it('normalises brackets, whitespace and case', () => {
    assert.equal(normaliseMessageId(' <ABC.123@Example.COM> '), 'abc.123@example.com');
    assert.equal(normaliseMessageId('<abc@example.com> (comment)'), 'abc@example.com');
    assert.equal(normaliseMessageId('bare-id@example.com'), 'bare-id@example.com');
    assert.equal(normaliseMessageId('<>'), null);
    assert.equal(normaliseMessageId(''), null);
    assert.equal(normaliseMessageId('no id here'), null);
  });

  it('reads References in order, folded, deduplicated, ignoring junk', () => {
    assert.deepEqual(parseIdList('<a@x>\r\n <B@x>\t<c@x> <a@x>'), ['a@x', 'b@x', 'c@x']);
    assert.deepEqual(parseIdList('Your message of Monday <orig@host> "quoted"'), ['orig@host']);
    assert.deepEqual(parseIdList('a@x b@x'), ['a@x', 'b@x']);
    assert.deepEqual(parseIdList(null), []);
  });
});

/** A three-message conversation: A starts it, B answers A, C answers B. */
function conversation() {
  const base = (id: string, subject: string, extra: Array<[string, string]>) =>
    message(
      [
        ['From', 'Ann <ann@example.com>'],
        ['To', 'bob@example.com'],
        ['Subject', subject],
        ['Date', 'Mon, 3 Jun 2024 10:00:00 +0000'],
        ['Message-ID', id],
        ...extra,
      ],
      `${subject}\r\n`,
    );
  return {
    a: base('<Root.1@Example.com>', 'Plans', []),
    b: base('<reply.2@example.com>', 'Re: Plans', [
      ['In-Reply-To', '<root.1@example.com>'],
      ['References', '<root.1@example.com>'],
    ]),
    c: base('<reply.3@example.com>', 'Re: Re: Plans', [
      ['In-Reply-To', '<reply.2@example.com>'],
      ['References', '<root.1@example.com>\r\n <reply.2@example.com>'],
    ]),
  };
}

describe('threading without a provider thread id', () => {
  it('keeps a conversation together when its middle message is never ingested', async () => {
    const { a, c } = conversation();
    const first = await parseEmail(a);
    const last = await parseEmail(c);
    assert.equal(first.meta.threadKey, 'root.1@example.com');
    assert.equal(last.meta.threadKey, first.meta.threadKey);
    assert.equal(last.meta.inReplyTo, 'reply.2@example.com');
    assert.deepEqual(last.meta.references, ['root.1@example.com', 'reply.2@example.com']);
  });

  it('puts the middle message in the same thread when it does arrive', async () => {
    const { a, b } = conversation();
    assert.equal((await parseEmail(b)).meta.threadKey, (await parseEmail(a)).meta.threadKey);
  });

  it('threads a reply with only In-Reply-To under its parent', async () => {
    const reply = await parseEmail(
      message([
        ['From', 'x@example.com'],
        ['Message-ID', '<r@x>'],
        ['In-Reply-To', '<Parent@X>'],
      ]),
    );
    assert.equal(reply.meta.threadKey, 'parent@x');
  });

  it('starts a thread of its own when it refers to nothing; without a Message-ID the identity is the key', async () => {
    const alone = await parseEmail(
      message([
        ['From', 'x@example.com'],
        ['Message-ID', '<Solo@X>'],
      ]),
    );
    assert.equal(alone.meta.threadKey, 'solo@x');
    const anonymous = await parseEmail(
      message([
        ['From', 'x@example.com'],
        ['Subject', 'no id'],
      ]),
    );
    assert.equal(anonymous.meta.threadKey, anonymous.identity);
  });
});
