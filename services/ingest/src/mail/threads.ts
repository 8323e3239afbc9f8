import { sql, type Transaction } from 'kysely';
import type { MailMeta } from '../handlers/index.js';
import type { IngestDatabase } from '../items/schema.js';

/**
 * Threads as notmuch and mu build them (JWZ's "every id a message names is in its conversation"):
 * a message, every id in its References and its In-Reply-To are one thread; an id no message has
 * yet is a ghost that holds its place, so a reply that arrives before its parent, replies whose
 * mailer trimmed References, and replies to a root that never arrived all meet. A message that
 * names ids of two threads joins them (a missing middle message arriving later re-joins the
 * halves); a References loop is just two ids naming each other. A thread is a connected
 * component: which message came first cannot change it, so a replay of the log gives the same
 * threads, and the thread's key is the key of the thread that was there first.
 *
 * `thread_ids` maps every id seen (messages and ghosts) to its thread key.
 */
export function threadIds(meta: Pick<MailMeta, 'messageId' | 'references' | 'inReplyTo'>, identity: string): string[] {
  const own = meta.messageId ?? identity;
  return [...new Set([own, ...meta.references, ...(meta.inReplyTo ? [meta.inReplyTo] : [])])];
}

/**
 * The thread key of a message about to get its row, with the thread index updated: its ids join
 * one thread, and threads it connects are merged into the oldest (lowest first sequence) of them,
 * the rows of their messages re-keyed.
 */
export async function joinThread(trx: Transaction<IngestDatabase>, ids: string[], seq: number): Promise<string> {
  const found = await trx
    .selectFrom('thread_ids')
    .select(['thread_key', (eb) => eb.fn.min('first_seq').as('first_seq')])
    .where('id', 'in', ids)
    .groupBy('thread_key')
    .orderBy('first_seq')
    .orderBy('thread_key')
    .execute();
  const key = found[0]?.thread_key ?? ids[0]!;
  const merged = found.slice(1).map((row) => row.thread_key);
  if (merged.length > 0) {
    await trx.updateTable('thread_ids').set({ thread_key: key }).where('thread_key', 'in', merged).execute();
    await trx.updateTable('messages').set({ thread_key: key }).where('thread_key', 'in', merged).execute();
  }
  const firstSeq = found[0] ? Number(found[0].first_seq) : seq;
  await trx
    .insertInto('thread_ids')
    .values(ids.map((id) => ({ id, thread_key: key, first_seq: firstSeq })))
    .onConflict((oc) => oc.column('id').doUpdateSet({ thread_key: sql`excluded.thread_key` }))
    .execute();
  return key;
}
