import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import pg from 'pg';
import { Bus, EventPublisher, newId, type NamedDraft, bindDraft } from '@memex/bus';
import { noteMarkdownOf } from '@memex/contracts';
import { createTestEnv, waitUntil, type TestEnv } from '@memex/testing';
import { snapshotSchema } from './snapshot.js';

const ingestMain = createRequire(import.meta.url)
  .resolve('@memex/ingest')
  .replace(/index\.js$/, 'main.js');
const EVENTS = 5000;

let env: TestEnv;
let bus: Bus;
before(async () => {
  env = await createTestEnv();
  bus = await Bus.connect(env.config.natsUrl, 'crash-test');
  await bus.ensureStreams();
});
after(async () => {
  await bus.close();
  await env.stop();
});

function startIngest(): ChildProcess {
  return spawn(process.execPath, [ingestMain], {
    env: {
      ...process.env,
      MEMEX_HOME: env.home,
      MEMEX_NATS_URL: env.config.natsUrl,
      MEMEX_DATABASE_URL: env.config.databaseUrl,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function checkpoint(): Promise<number> {
  const client = new pg.Client({ connectionString: env.config.databaseUrl });
  await client.connect();
  try {
    const result = await client.query<{ seq: number }>(
      `select seq from ingest.projector_checkpoint where projector = 'ingest'`,
    );
    return Number(result.rows[0]?.seq ?? 0);
  } catch {
    return 0; // the schema does not exist yet
  } finally {
    await client.end();
  }
}

test('a projector killed with SIGKILL mid-stream ends with exactly the rows of a clean replay', async () => {
  const publisher = new EventPublisher(bus);
  const drafts: NamedDraft[] = [];
  for (let i = 0; i < EVENTS; i++) {
    const id = newId();
    drafts.push({
      type: 'note.put',
      subject: `item:${id}`,
      actor: { kind: 'user', id: 'owner' },
      kind: 'note',
      labels: i % 3 === 0 ? ['x'] : [],
      data: { id, title: `note ${i}`, body: `body of note ${i}`, markdown: noteMarkdownOf(`body of note ${i}`) },
    });
  }
  for (let i = 0; i < drafts.length; i += 500)
    await publisher.publishAll(drafts.slice(i, i + 500).map((draft) => bindDraft(draft)));
  const last = await bus.lastSeq();

  const first = startIngest();
  await waitUntil(async () => (await checkpoint()) >= 500, 'the projector to get going');
  const killedAt = await checkpoint();
  first.kill('SIGKILL');
  await new Promise((resolve) => first.once('exit', resolve));
  assert.ok(killedAt < last, `killed at ${killedAt}, before the end (${last})`);

  const second = startIngest();
  try {
    await waitUntil(async () => (await checkpoint()) === last, 'the restarted projector to catch up');
  } finally {
    second.kill('SIGTERM');
    await new Promise((resolve) => second.once('exit', resolve));
  }
  const live = await snapshotSchema(env.config.databaseUrl, 'ingest');
  assert.equal(live.items!.length, EVENTS);

  // A clean replay of the same log into another database must give the same rows.
  const clean = await createTestEnv({ natsUrl: env.config.natsUrl });
  try {
    const replayer = spawn(process.execPath, [ingestMain], {
      env: {
        ...process.env,
        MEMEX_HOME: clean.home,
        MEMEX_NATS_URL: env.config.natsUrl,
        MEMEX_DATABASE_URL: clean.config.databaseUrl,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const cleanCheckpoint = async () => {
      const client = new pg.Client({ connectionString: clean.config.databaseUrl });
      await client.connect();
      try {
        return Number((await client.query(`select seq from ingest.projector_checkpoint`)).rows[0]?.seq ?? 0);
      } catch {
        return 0;
      } finally {
        await client.end();
      }
    };
    await waitUntil(async () => (await cleanCheckpoint()) === last, 'the clean replay');
    replayer.kill('SIGTERM');
    await new Promise((resolve) => replayer.once('exit', resolve));
    assert.deepEqual(await snapshotSchema(clean.config.databaseUrl, 'ingest'), live);
  } finally {
    await clean.stop();
  }
});
