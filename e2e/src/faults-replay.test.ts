import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { waitUntil } from '@memex/testing';
import { importMbox, spawnMemex } from './mbox-import.js';
import { snapshotSchema } from './snapshot.js';
import { archiveFor, replayAndCompare, startSupervisedStack, type SupervisedStack } from './supervised-stack.js';

/**
 * Faults in the middle of `memex replay graph` (the slowest projector, so the replay lasts long
 * enough to break): NATS restarted, then the graph service SIGKILLed. Either way the replay ends
 * (at once with a clear error when its service died, so the owner runs it again), a replay run
 * after the fault equals a clean one row for row, and the live schema is whole at every moment.
 */
const MESSAGES = 2_000;
const SERVICES = ['gateway', 'ingest', 'graph'];

let stack: SupervisedStack;
let reference: Record<string, unknown[]>;
let watcher: pg.Client;

before(async () => {
  stack = await startSupervisedStack(SERVICES);
  const imported = await importMbox(await archiveFor(stack, MESSAGES, 29), 5).done;
  assert.equal(imported.code, 0, JSON.stringify(imported.summary));
  await stack.settled();
  // The clean replay every faulty one must equal; it equals the live read model too.
  const { live, replayed } = await replayAndCompare(stack, 'graph', 'graph');
  assert.deepEqual(replayed, live);
  reference = replayed;
  watcher = new pg.Client({ connectionString: stack.config.databaseUrl });
  await watcher.connect();
});
after(async () => {
  await watcher?.end();
  await stack?.stop();
});

/** How far the replay has come in graph_next (0 before it starts and after it is gone). */
async function replayProgress(): Promise<number> {
  try {
    const { rows } = await watcher.query<{ seq: string }>('select seq from graph_next.projector_checkpoint');
    return Number(rows[0]?.seq ?? 0);
  } catch {
    return 0;
  }
}

/** The live schema's tables, sampled every few ms until stopped: a half-swapped schema would show. */
function watchLiveSchema(): { stop(): Promise<Set<number>> } {
  const counts = new Set<number>();
  let watching = true;
  const client = new pg.Client({ connectionString: stack.config.databaseUrl });
  const loop = (async () => {
    await client.connect();
    while (watching) {
      const { rows } = await client.query<{ n: number }>(
        `select count(*)::int as n from information_schema.tables where table_schema = 'graph'`,
      );
      counts.add(rows[0]!.n);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await client.end();
  })();
  return {
    async stop() {
      watching = false;
      await loop;
      return counts;
    },
  };
}

/** Starts `memex replay graph`, breaks something once it is under way, and returns how the run ended. */
async function replayBrokenBy(fault: () => Promise<unknown>) {
  const run = spawnMemex({ url: stack.url, token: stack.token, home: stack.config.home }, ['replay', 'graph']);
  let ended = false;
  void run.done.then(() => (ended = true));
  await waitUntil(async () => ended || (await replayProgress()) > 0, 'the replay under way', { everyMs: 20 });
  const progress = await replayProgress();
  assert.ok(!ended && progress > 0, 'the fault came in the middle of the replay');
  const faultAt = Date.now();
  await fault();
  const result = await run.done;
  return { ...result, progress, endedAfterFaultMs: Date.now() - faultAt };
}

describe('faults during memex replay', () => {
  const tables = () => Object.keys(reference).length + 1; // schema_migrations is not in the snapshot

  test('NATS restarted mid-replay: the replay ends, a replay after it equals a clean one', async () => {
    const live = watchLiveSchema();
    const broken = await replayBrokenBy(() => stack.env.restartNats());
    // It may finish (reconnected) or fail; a failed one is run again, as its owner would.
    if (broken.code !== 0) assert.match(broken.stderr, /\S/, 'a failed replay says why');
    const rerun =
      broken.code === 0 ? undefined : await replayAndCompare(stack, 'graph', 'graph').then((r) => r.replayed);
    assert.deepEqual(rerun ?? (await snapshotSchema(stack.config.databaseUrl, 'graph')), reference);
    assert.deepEqual([...(await live.stop())], [tables()], 'the live schema was whole throughout');
    assert.equal(await replayProgress(), 0, 'no graph_next left behind');
    console.log(
      `faults (replay): NATS restarted at replay seq ${broken.progress}: the replay ${broken.code === 0 ? 'finished' : `failed (${broken.stderr.trim()}) and was run again`}, ${broken.endedAfterFaultMs} ms after the restart; equal to a clean replay`,
    );
  });

  test('graph SIGKILLed mid-replay: memex replay says so at once, the live schema stays whole, a new replay equals a clean one', async () => {
    const live = watchLiveSchema();
    const broken = await replayBrokenBy(() => stack.kill('graph'));
    assert.equal(broken.code, 1, 'the replay whose service died fails');
    assert.match(broken.stderr, /fell silent/);
    assert.deepEqual(
      await snapshotSchema(stack.config.databaseUrl, 'graph'),
      reference,
      'the live read model untouched',
    );
    const { replayed } = await replayAndCompare(stack, 'graph', 'graph');
    assert.deepEqual(replayed, reference);
    assert.deepEqual([...(await live.stop())], [tables()], 'the live schema was whole throughout');
    assert.equal(await replayProgress(), 0, 'the new replay dropped the dead one’s graph_next');
    console.log(
      `faults (replay): graph SIGKILLed at replay seq ${broken.progress}: memex replay failed ${broken.endedAfterFaultMs} ms after the kill (${broken.stderr.trim()}); run again, equal to a clean replay`,
    );
  });
});
