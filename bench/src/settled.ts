import pg from 'pg';
import { JobsStatus, Search, type MethodDefinition, type ParamsOf, type ResultOf } from '@memex/contracts';
import { waitUntil } from '@memex/testing';

interface Caller {
  call<M extends MethodDefinition>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>>;
}

interface Health {
  log: { last_seq: number };
  services: Array<{ service: string; projector?: { lag: number } }>;
}

/**
 * Resolves when the memex has taken in everything logged — what a user waits for before search
 * finds it all: the pipelines idle, every projector at the log's end (healthz), search answering
 * at the last sequence, and the log no longer growing between two looks.
 */
export async function settled(client: Caller, url: string, probe: string, timeoutMs: number): Promise<void> {
  let previous = -1;
  await waitUntil(
    async () => {
      const idle = (await client.call(JobsStatus, {})).queues.every((q) => q.waiting === 0 && q.in_progress === 0);
      const health = (await (await fetch(`${url}/healthz`)).json()) as Health;
      const caughtUp = health.services.every((service) => (service.projector?.lag ?? 0) === 0);
      const seq = health.log.last_seq;
      const searched = await client.call(Search, { q: probe, min_seq: seq }).then(
        () => true,
        () => false,
      );
      const done = idle && caughtUp && searched && seq === previous;
      previous = seq;
      return done;
    },
    'the pipelines and every read model to finish',
    { timeoutMs, everyMs: 2000 },
  );
}

/**
 * Resolves when search has moved every fresh vector into its indexed tables (the tables
 * `search.vec_<n>_*_fresh` empty, and every main table's ANN index built): after searchable, the
 * rest of what indexing costs.
 */
export async function vectorsIndexed(databaseUrl: string, timeoutMs: number): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await waitUntil(
      async () => {
        // One snapshot for every look (the catalog read through pg_class, not to_regclass, which
        // reads the latest): looked at table by table, a rebuild of the indexes that began between
        // two looks (indexes dropped after the first, fresh rows moved before the last) passed.
        await client.query('begin isolation level repeatable read');
        try {
          const { rows: tables } = await client.query<{ name: string; indexed: boolean; valid: boolean }>(
            // A table's ANN index is every shard's (…_ann, …_ann_s1, …), each built and valid.
            `select t.relname as name, t.relname not like '%\\_fresh' as indexed,
               coalesce(bool_and(i.indisvalid), false)
                 and count(*) filter (where x.relname = t.relname || '_ann') = 1 as valid
             from pg_class t join pg_namespace n on n.oid = t.relnamespace and n.nspname = 'search'
               left join pg_class x on x.relnamespace = n.oid
                 and (x.relname = t.relname || '_ann' or x.relname ~ ('^' || t.relname || '_ann_s[0-9]+$'))
               left join pg_index i on i.indexrelid = x.oid
             where t.relkind = 'r' and t.relname ~ '^vec_\\d+_(parts|items)(_fresh)?$'
             group by t.relname`,
          );
          // Called after searchable, on mail: no vector table at all is a bench fault, not a wait.
          if (tables.length === 0) throw new Error('no vector table in the search schema: nothing was embedded');
          for (const { name, indexed, valid } of tables) {
            if (indexed && !valid) return false;
            if (!indexed && (await client.query(`select 1 from search."${name}" limit 1`)).rows.length > 0)
              return false;
          }
          return true;
        } finally {
          await client.query('commit');
        }
      },
      'every fresh vector to be in an ANN index',
      { timeoutMs, everyMs: 1000 },
    );
  } finally {
    await client.end();
  }
}
