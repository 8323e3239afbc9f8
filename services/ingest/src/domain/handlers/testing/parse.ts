import assert from 'node:assert/strict';
import { RejectedItem, type DocumentItem, type EmailItem, type ParsedItem } from '../handler.js';
import { createRegistry } from '../registry.js';

export const registry = createRegistry();

export async function parseEmail(bytes: Buffer, attributes: Record<string, unknown> = {}): Promise<EmailItem> {
  const item = await registry.parse({ type: 'message/rfc822', bytes, attributes });
  assert.equal(item.kind, 'email');
  return item as EmailItem;
}

export async function parseDoc(
  type: string,
  bytes: Buffer | string,
  attributes: Record<string, unknown> = {},
): Promise<DocumentItem> {
  const item = await registry.parse({
    type,
    bytes: typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes,
    attributes,
  });
  assert.equal(item.kind, 'document');
  return item as DocumentItem;
}

/** The rejection a parse ends in; fails the test when it parses, or fails in an unforeseen way. */
export async function rejection(parsing: Promise<ParsedItem> | (() => unknown)): Promise<RejectedItem> {
  try {
    await (typeof parsing === 'function' ? parsing() : parsing);
  } catch (error) {
    assert.ok(error instanceof RejectedItem, `expected a RejectedItem, got ${String(error)}`);
    assert.equal(error.unexpected, false, `unforeseen failure: ${error.reason}`);
    return error;
  }
  assert.fail('expected the item to be rejected, but it parsed');
}

function checkParsed(item: ParsedItem): void {
  assert.match(item.identity, /^(message-id:.+|mail-sha256:[0-9a-f]{64}|sha256:[0-9a-f]{64})$/);
  assert.equal(typeof item.title, 'string');
  assert.equal(typeof item.text, 'string');
  assert.ok(item.occurredAt === null || !Number.isNaN(Date.parse(item.occurredAt)));
  assert.ok(Array.isArray(item.warnings));
  // meta travels in events: it must survive JSON.
  JSON.stringify(item.meta);
  for (const child of item.children ?? []) {
    assert.equal(child.kind, 'attachment');
    checkParsed(child);
  }
}

/** For fuzzing: the item parses into a well-formed result, or is rejected with a foreseen reason. */
export async function parsedOrCleanlyRejected(input: {
  type: string;
  bytes: Buffer;
  attributes?: Record<string, unknown>;
}): Promise<'parsed' | 'rejected'> {
  try {
    checkParsed(await registry.parse(input));
    return 'parsed';
  } catch (error) {
    if (!(error instanceof RejectedItem)) throw error;
    assert.equal(error.unexpected, false, `unforeseen failure: ${error.reason}`);
    assert.match(error.reason, /\S/);
    return 'rejected';
  }
}
