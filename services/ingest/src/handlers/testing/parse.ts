import assert from 'node:assert/strict';
import { RejectedItem, type DocumentItem, type EmailItem, type ParsedItem } from '../handler.js';
import { createRegistry } from '../registry.js';

export const registry = createRegistry();

export async function parseEmail(bytes: Buffer, attributes: Record<string, unknown> = {}): Promise<EmailItem> {
  const item = await registry.parse({ type: 'message/rfc822', bytes, attributes });
  assert.equal(item.kind, 'email');
  return item as EmailItem;
}

export async function parseDoc(type: string, bytes: Buffer | string, attributes: Record<string, unknown> = {}): Promise<DocumentItem> {
  const item = await registry.parse({ type, bytes: typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes, attributes });
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
