import { RejectedItem } from '../handler.js';
import type { MailAttributes } from './mail-handler.js';

/** Apple Mail's one-message file (`.emlx`, and `.partial.emlx` whose attachments Mail keeps apart). */
export const APPLE_MAIL_TYPE = 'message/x-emlx';

/** The first line of an .emlx: the message's length in bytes, in decimal, padded with spaces. */
const LENGTH_LINE = /^[ \t]*(\d{1,12})[ \t]*\r?\n/;

/** Bits of the plist's `flags` that the memex keeps (Mail's own layout: bit 0 read, bit 4 flagged). */
const READ = 1n << 0n;
const FLAGGED = 1n << 4n;

export function isAppleMailMessage(bytes: Buffer): boolean {
  const line = LENGTH_LINE.exec(bytes.subarray(0, 32).toString('latin1'));
  return line !== null && line[0].length + Number(line[1]) <= bytes.length;
}

/**
 * The message inside an .emlx, and what the property list after it says about the message: read
 * and flagged from its `flags`, and when it arrived (`date-received`: the date of a message whose
 * own headers give none). What the caller said wins over the file (an importer knows the folder
 * and may know the flags); the file wins over the defaults.
 */
export function unwrapAppleMail(
  bytes: Buffer,
  attributes: MailAttributes,
): { message: Buffer; attributes: MailAttributes } {
  const line = LENGTH_LINE.exec(bytes.subarray(0, 32).toString('latin1'));
  if (!line) throw new RejectedItem('not an Apple Mail .emlx file: its first line is not the length of the message');
  const start = line[0].length;
  const length = Number(line[1]);
  if (start + length > bytes.length)
    throw new RejectedItem(
      `truncated Apple Mail .emlx file: its first line says the message is ${length} bytes, the file holds ${bytes.length - start} after it`,
    );
  const plist = bytes.subarray(start + length).toString('utf8');
  const flags = /<key>flags<\/key>\s*<integer>(\d+)<\/integer>/.exec(plist)?.[1];
  const received = /<key>date-received<\/key>\s*<(?:real|integer)>([\d.]+)<\/(?:real|integer)>/.exec(plist)?.[1];
  const bits = flags === undefined ? undefined : BigInt(flags);
  const fromFile: MailAttributes = {
    ...(bits === undefined ? {} : { read: (bits & READ) !== 0n, starred: (bits & FLAGGED) !== 0n }),
    ...(received ? { received: new Date(Number(received) * 1000).toISOString() } : {}),
  };
  return { message: bytes.subarray(start, start + length), attributes: { ...fromFile, ...attributes } };
}
