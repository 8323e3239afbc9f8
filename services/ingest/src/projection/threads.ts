import { sql, type Kysely, type Transaction } from 'kysely';
import type { MailMeta } from '../domain/handlers/index.js';
import type { IngestDatabase } from './schema.js';

/**
 * Threads as notmuch and mu build them (JWZ's "every id a message names is in its conversation"):
 * a message, every id in its References and its In-Reply-To are one thread; an id no message has
 * yet is a ghost that holds its place, so a reply that arrives before its parent, replies whose
 * mailer trimmed References, and replies to a root that never arrived all meet. A message that
 * names ids of two threads joins them (a missing middle message arriving later re-joins the
 * halves); a References loop is just two ids naming each other. A thread is a connected
 * component: which message came first cannot change it, so a replay of the log gives the same
 * threads, and the thread's key is the key of the thread that was there first. An Outlook
 * conversation (Thread-Index) is one more id its messages share: a reply Exchange sent without
 * References still meets its thread.
 *
 * `thread_ids` maps every id seen (messages, ghosts and conversations) to its thread key.
 */
export function threadIds(
  meta: Pick<MailMeta, 'messageId' | 'references' | 'inReplyTo' | 'conversation'>,
  identity: string,
): string[] {
  const own = meta.messageId ?? identity;
  const named = [...meta.references, ...(meta.inReplyTo ? [meta.inReplyTo] : [])];
  return [...new Set([own, ...named, ...(meta.conversation ? [meta.conversation] : [])])];
}

/**
 * The thread keys of a run of messages about to get their rows (each `ids` as `threadIds` gives
 * them, in log order), with the thread index updated: each message's ids join one thread, and
 * threads it connects are merged into the oldest (lowest first sequence among its ids) of them,
 * the rows of their messages re-keyed. The index rows of the run's ids are read once and joined
 * in memory one message after another, then written once; merged threads are re-keyed once, to
 * the key they end under — the same rows as message by message, whatever the run's length.
 * Answers each message's key once all are in (a later message may merge an earlier one's thread).
 */
export async function joinThreads(
  trx: Transaction<IngestDatabase>,
  messages: { ids: string[]; seq: number }[],
): Promise<string[]> {
  if (messages.length === 0) return [];
  const all = [...new Set(messages.flatMap((m) => m.ids))];
  const rows = new Map(
    (
      await trx
        .selectFrom('thread_ids')
        .select(['id', 'thread_key', 'first_seq'])
        .where(sql<boolean>`id = any(${all}::text[])`)
        .execute()
    ).map((row) => [row.id, { key: row.thread_key, first: Number(row.first_seq) }]),
  );
  const written = new Set<string>();
  /** Each merged thread's key → the key it was merged into (which may be merged later). */
  const mergedInto = new Map<string, string>();
  for (const { ids, seq } of messages) {
    // Each thread the ids are in, by its lowest first sequence among them.
    const found = new Map<string, number>();
    for (const id of ids) {
      const row = rows.get(id);
      if (row) found.set(row.key, Math.min(found.get(row.key) ?? Infinity, row.first));
    }
    const threads = [...found].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
    const key = threads[0]?.[0] ?? ids[0]!;
    const firstSeq = threads[0]?.[1] ?? seq;
    const merged = new Set(threads.slice(1).map(([k]) => k));
    if (merged.size > 0) {
      for (const m of merged) mergedInto.set(m, key);
      for (const [id, row] of rows) {
        if (!merged.has(row.key)) continue;
        row.key = key;
        written.add(id);
      }
    }
    for (const id of ids) {
      const row = rows.get(id);
      if (row) row.key = key;
      else rows.set(id, { key, first: firstSeq });
      written.add(id);
    }
  }
  const finalKey = (key: string): string => {
    let k = key;
    while (mergedInto.has(k)) k = mergedInto.get(k)!;
    return k;
  };
  const renames = [...mergedInto.keys()].map((old) => ({ old, key: finalKey(old) }));
  if (renames.length > 0) {
    // The rows of merged threads the run's messages do not name, and the messages already in them.
    const renamed = sql`(select * from jsonb_to_recordset(${JSON.stringify(renames)}::jsonb) as r(old text, key text))`;
    await sql`update thread_ids t set thread_key = r.key from ${renamed} r where t.thread_key = r.old`.execute(trx);
    await sql`update messages m set thread_key = r.key from ${renamed} r where m.thread_key = r.old`.execute(trx);
  }
  await trx
    .insertInto('thread_ids')
    .values([...written].map((id) => ({ id, thread_key: rows.get(id)!.key, first_seq: rows.get(id)!.first })))
    .onConflict((oc) => oc.column('id').doUpdateSet({ thread_key: sql`excluded.thread_key` }))
    .execute();
  return messages.map(({ ids }) => rows.get(ids[0]!)!.key);
}

/** A message whose thread a bulk load puts off (see `stageThreads`): its ids as `threadIds` gives them. */
export interface StagedMessage {
  itemId: string;
  ids: string[];
  seq: number;
}

/**
 * A rebuild's bulk load applies items in two lanes (ItemsProjector.bulkLanes), but threads are
 * shared by items of both: it writes each message with no thread (an empty key) and stages its
 * ids here, for `joinStagedThreads` to join once the load is done.
 */
export async function stageThreads(trx: Transaction<IngestDatabase>, messages: StagedMessage[]): Promise<void> {
  if (messages.length === 0) return;
  await sql`insert into thread_ids_bulk (seq, item_id, ids)
    select * from unnest(${messages.map((m) => m.seq)}::bigint[], ${messages.map((m) => m.itemId)}::text[],
      ${messages.map((m) => JSON.stringify(m.ids))}::jsonb[])`.execute(trx);
}

/** Staged messages `joinStagedThreads` joins at a time: their ids' thread rows are read and held at once. */
const STAGED_RUN = 5000;

/**
 * The threads of a bulk load's staged messages (`stageThreads`), joined in log order a run at a
 * time as `joinThreads` joins live runs, so the thread index and the messages' keys are the rows
 * live projection writes. A message's row takes the key of its first version's run, as live,
 * where a later version inserts no row.
 */
export async function joinStagedThreads(db: Kysely<IngestDatabase>, run = STAGED_RUN): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (let after = 0; ;) {
      const { rows } = await sql<{ seq: string; item_id: string; ids: string[] }>`
        select seq, item_id, ids from thread_ids_bulk where seq > ${after} order by seq limit ${run}`.execute(trx);
      if (rows.length === 0) break;
      const keys = await joinThreads(
        trx,
        rows.map((row) => ({ ids: row.ids, seq: Number(row.seq) })),
      );
      const first = new Map<string, string>();
      rows.forEach((row, i) => first.has(row.item_id) || first.set(row.item_id, keys[i]!));
      await sql`update messages m set thread_key = k.key
        from unnest(${[...first.keys()]}::text[], ${[...first.values()]}::text[]) k (item_id, key)
        where m.item_id = k.item_id and m.thread_key = ''`.execute(trx);
      after = Number(rows[rows.length - 1]!.seq);
    }
    await sql`truncate thread_ids_bulk`.execute(trx);
  });
}
