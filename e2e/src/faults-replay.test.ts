import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { Months, type ResultOf } from '@memex/contracts';
import { waitUntil } from '@memex/testing';
import { importMbox, spawnMemex } from './mbox-import.js';
import { snapshotSchema } from './snapshot.js';
import {
  archiveFor,
  faultsMessages,
  replayAndCompare,
  startOwnPostgres,
  startSupervisedStack,
  type OwnPostgres,
  type SupervisedStack,
} from './supervised-stack.js';

/**
 * Faults in the middle of `memex replay graph` (the slowest projector, so the replay lasts long
 * enough to break): NATS restarted, Postgres restarted (the stack's own cluster), then the graph
 * service SIGKILLed. Either way the replay ends (at once with a clear error when its service died,
 * so the owner runs it again), a replay run after the fault equals a clean one row for row, and
 * the live schema is whole at every moment: its tables all there, and graph's queries, asked
 * throughout, answer exactly what the clean read model answers, while the rebuild runs too.
 *
 * Measured on 2 December 2026 (2 cores shared with other work): 2,000 messages in 2.5 min at load
 * ~7; MEMEX_FAULTS_MESSAGES=10000 in 8.2 min at load 15-49 (Postgres stopped 3 s: a replay equal
 * to a clean one 60 s after the stop; graph answered ~1,300-1,900 times during each rebuild).
 */
const MESSAGES = faultsMessages(2_000);
/** The suite's 5 minutes per step in CI, more for MEMEX_FAULTS_MESSAGES=10000 by hand. */
const SCALED = { timeout: 300_000 * Math.max(1, MESSAGES / 2_000) };
const SERVICES = ['gateway', 'ingest', 'graph'];
const POSTGRES_DOWN_MS = 3_000;

let postgres: OwnPostgres;
let stack: SupervisedStack;
let reference: Record<string, unknown[]>;
let referenceMonths: ResultOf<typeof Months>;
let watcher: pg.Pool;

before(async () => {
  postgres = await startOwnPostgres();
  stack = await startSupervisedStack(SERVICES, { databaseUrl: postgres.url });
  const imported = await importMbox(await archiveFor(stack, MESSAGES, 29), 5).done;
  assert.equal(imported.code, 0, JSON.stringify(imported.summary));
  await stack.settled();
  // The clean replay every faulty one must equal; it equals the live read model too.
  const { live, replayed } = await replayAndCompare(stack, 'graph', 'graph');
  assert.deepEqual(replayed, live);
  reference = replayed;
  referenceMonths = await stack.owner.call(Months, {});
  assert.ok(referenceMonths.months.length > 0, 'the archive fills some months');
  // A pool, not a client: it reconnects after Postgres restarts (an idle client's error is expected then).
  watcher = new pg.Pool({ connectionString: postgres.url, max: 2 });
  watcher.on('error', () => undefined);
}, SCALED);
after(async () => {
  await watcher?.end();
  await stack?.stop();
  await postgres?.stop();
});

/** How far the replay has come in graph_next (0 before it starts, after it is gone, and while Postgres is away). */
async function replayProgress(): Promise<number> {
  try {
    const { rows } = await watcher.query<{ seq: string }>('select seq from graph_next.projector_checkpoint');
    return Number(rows[0]?.seq ?? 0);
  } catch {
    return 0;
  }
}

/** What the live read model showed, sampled until stopped. */
interface LiveSamples {
  /** Table counts of the live schema seen (a half-swapped schema would show another). */
  tableCounts: Set<number>;
  /** memex.months answers equal to the clean read model's, in all and while graph_next was being built. */
  answered: number;
  answeredDuringRebuild: number;
  /** Answers that differed from the clean read model's (a half-built one). */
  wrong: Array<ResultOf<typeof Months>>;
  /** Asked while something was down: no answer. */
  unanswered: number;
}

/** Samples the live schema and graph's answers until stopped; what a restart makes unreachable is skipped. */
function watchLive(): { stop(): Promise<LiveSamples> } {
  const samples: LiveSamples = {
    tableCounts: new Set(),
    answered: 0,
    answeredDuringRebuild: 0,
    wrong: [],
    unanswered: 0,
  };
  let watching = true;
  const loop = (async () => {
    while (watching) {
      const tables = await watcher
        .query<{ n: number }>(`select count(*)::int as n from information_schema.tables where table_schema = 'graph'`)
        .catch(() => undefined);
      if (tables) samples.tableCounts.add(tables.rows[0]!.n);
      const rebuilding = (await replayProgress()) > 0;
      const months = await stack.owner.call(Months, {}).catch(() => undefined);
      if (!months) samples.unanswered++;
      else if (!isDeepStrictEqual(months, referenceMonths)) samples.wrong.push(months);
      else {
        samples.answered++;
        if (rebuilding) samples.answeredDuringRebuild++;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  return {
    async stop() {
      watching = false;
      await loop;
      return samples;
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

/**
 * After a replay a fault broke: the owner runs it again if it failed (once every service answers
 * again), and the read model then equals the clean one, with no graph_next left behind.
 */
async function rerunIfFailed(broken: { code: number | null; stderr: string }): Promise<string> {
  if (broken.code !== 0) assert.match(broken.stderr, /\S/, 'a failed replay says why');
  await stack.ready();
  const replayed =
    broken.code === 0
      ? await snapshotSchema(stack.config.databaseUrl, 'graph')
      : (await replayAndCompare(stack, 'graph', 'graph')).replayed;
  assert.deepEqual(replayed, reference);
  assert.equal(await replayProgress(), 0, 'no graph_next left behind');
  return broken.code === 0 ? 'finished' : `failed (${broken.stderr.trim()}) and was run again`;
}

/** The live schema whole and graph's answers those of the clean read model, at every sample. */
function assertWholeThroughout(samples: LiveSamples): void {
  const tables = Object.keys(reference).length + 1; // schema_migrations is not in the snapshot
  assert.deepEqual([...samples.tableCounts], [tables], 'the live schema was whole throughout');
  assert.deepEqual(samples.wrong, [], 'graph answered as the clean read model does, or not at all');
  assert.ok(samples.answeredDuringRebuild > 0, 'graph answered while a replay rebuilt graph_next');
}

const describeSamples = (samples: LiveSamples) =>
  `memex.months answered ${samples.answered} times (${samples.answeredDuringRebuild} during a rebuild), each as the clean read model, ${samples.unanswered} unanswered while down`;

describe('faults during memex replay', () => {
  test('NATS restarted mid-replay: the replay ends, a replay after it equals a clean one', SCALED, async () => {
    const live = watchLive();
    const broken = await replayBrokenBy(() => stack.env.restartNats());
    const outcome = await rerunIfFailed(broken);
    const samples = await live.stop();
    assertWholeThroughout(samples);
    console.log(
      `faults (replay): NATS restarted at replay seq ${broken.progress}: the replay ${outcome}, ${broken.endedAfterFaultMs} ms after the restart; equal to a clean replay; ${describeSamples(samples)}`,
    );
  });

  test(
    `Postgres down ${POSTGRES_DOWN_MS / 1000} s mid-replay: the replay ends, a replay after it equals a clean one`,
    SCALED,
    async () => {
      const live = watchLive();
      let downAt = 0;
      const broken = await replayBrokenBy(async () => {
        downAt = Date.now();
        await postgres.stop();
        await new Promise((resolve) => setTimeout(resolve, POSTGRES_DOWN_MS));
        await postgres.start();
      });
      if (broken.code !== 0) assert.match(broken.stderr, /graph replay broke off .*run memex replay graph again/);
      const outcome = await rerunIfFailed(broken);
      const recoveredMs = Date.now() - downAt;
      const samples = await live.stop();
      assertWholeThroughout(samples);
      console.log(
        `faults (replay): Postgres stopped at replay seq ${broken.progress} for ${POSTGRES_DOWN_MS} ms: the replay ${outcome}; ` +
          `${recoveredMs} ms from the stop to a read model equal to a clean replay; ${describeSamples(samples)}`,
      );
    },
  );

  test(
    'graph SIGKILLed mid-replay: memex replay fails saying so, the live schema stays whole, a new replay equals a clean one',
    SCALED,
    async () => {
      const live = watchLive();
      const broken = await replayBrokenBy(() => stack.kill('graph'));
      assert.equal(broken.code, 1, 'the replay whose service died fails');
      assert.match(broken.stderr, /fell silent/);
      assert.deepEqual(
        await snapshotSchema(stack.config.databaseUrl, 'graph'),
        reference,
        'the live read model untouched',
      );
      await rerunIfFailed(broken);
      const samples = await live.stop();
      assertWholeThroughout(samples);
      console.log(
        `faults (replay): graph SIGKILLed at replay seq ${broken.progress}: memex replay failed ${broken.endedAfterFaultMs} ms after the kill (${broken.stderr.trim()}); run again, equal to a clean replay; ${describeSamples(samples)}`,
      );
    },
  );
});
