/**
 * Message-ID handling and the thread rule for mail that has no provider thread id.
 *
 * Ids are compared normalised: the text between `<` and `>`, trimmed, lowercased. (Message-IDs are
 * case-sensitive in RFC 5322, but two different messages whose ids differ only in case do not occur
 * in practice, while relays and archivers that change case do.)
 *
 * The mail views thread by every id a message names (mail/threads.ts, as notmuch does); the
 * threadKey below is what one message alone can say, carried on its event for consumers that
 * group without that index (the graph).
 *
 * Thread rule: a message's threadKey is the normalised id of its conversation's root, taken as
 * 1. the first id in References (RFC 5322 asks every reply to keep the root first, and clients that
 *    trim long References keep the first one), else
 * 2. In-Reply-To (a reply from a client that writes no References), else
 * 3. the message's own id (it starts a conversation), else its identity (no Message-ID at all).
 * Every message of a conversation names the root itself, so the key does not depend on having the
 * messages in between: A ← B ← C groups A and C even when B was never ingested.
 */

/** The ids in a References / In-Reply-To value, normalised, in order, without duplicates. */
export function parseIdList(value: string | null | undefined): string[] {
  if (!value) return [];
  const bracketed = [...value.matchAll(/<([^<>]*)>/g)].map((m) => m[1] ?? '');
  // Some mailers drop the brackets; then only whitespace-separated tokens that look like ids count.
  const ids = bracketed.length > 0 ? bracketed : value.split(/[\s,]+/).filter((t) => t.includes('@'));
  const out: string[] = [];
  for (const id of ids) {
    const normal = normaliseId(id);
    if (normal && !out.includes(normal)) out.push(normal);
  }
  return out;
}

function normaliseId(id: string): string | null {
  const normal = id.replace(/\s+/g, '').toLowerCase();
  return normal.length > 0 ? normal : null;
}

/** A Message-ID header value normalised, or null when there is none usable. */
export function normaliseMessageId(value: string | null | undefined): string | null {
  return parseIdList(value)[0] ?? null;
}

export function threadKey(message: {
  messageId: string | null;
  inReplyTo: string | null;
  references: string[];
  identity: string;
}): string {
  return message.references[0] ?? message.inReplyTo ?? message.messageId ?? message.identity;
}

/**
 * The conversation a Thread-Index header names (MS-OXOMSG: a 22-byte header block, the
 * conversation's start time and GUID, then five bytes per reply), or null when it has none or
 * the value is not one.
 */
export function outlookConversation(threadIndex: string | null): string | null {
  const value = threadIndex?.replace(/\s+/g, '');
  if (!value || !/^[A-Za-z0-9+/]+={0,2}$/.test(value)) return null;
  const bytes = Buffer.from(value, 'base64');
  if (bytes.length < 22 || (bytes.length - 22) % 5 !== 0) return null;
  return `thread-index:${bytes.subarray(0, 22).toString('hex')}`;
}
