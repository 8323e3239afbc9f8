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
 * Resolves when search has moved every fresh vector into its HNSW graphs (the tables
 * `search.vec_<n>_*_fresh` empty, and every graph table's index built): after searchable, the
 * rest of what indexing costs.
 */
export async function graphsComplete(databaseUrl: string, timeoutMs: number): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await waitUntil(
      async () => {
        const { rows: tables } = await client.query<{ name: string; graph: boolean }>(
          `select table_name as name, table_name not like '%\_fresh' as graph from information_schema.tables
           where table_schema = 'search' and table_name ~ '^vec_\d+_(parts|items)(_fresh)?$'`,
        );
        for (const { name, graph } of tables) {
          const { rows } = await client.query<{ done: boolean }>(
            graph
              ? `select coalesce((select indisvalid from pg_index where indexrelid = to_regclass('search."${name}_hnsw"')), false) as done`
              : `select not exists (select 1 from search."${name}") as done`,
          );
          if (!rows[0]!.done) return false;
        }
        return true;
      },
      'every fresh vector to be in the HNSW graphs',
      { timeoutMs, everyMs: 1000 },
    );
  } finally {
    await client.end();
  }
}
