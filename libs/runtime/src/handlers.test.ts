import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Injectable, Module } from '@nestjs/common';
import { Type } from '@sinclair/typebox';
import type { Kysely, Transaction } from 'kysely';
import {
  defineEvent,
  EventRegistry,
  NotePut,
  TokenCreated,
  TokenRevoked,
  type EventOf,
  noteMarkdownOf,
} from '@memex/contracts';
import { Bus, draftOf, EventPublisher, EVENTS_STREAM, newId } from '@memex/bus';
import { createDatabase, type Migration } from '@memex/db';
import { createTestEnv, type TestEnv } from '@memex/testing';
import { On, OnBatch, Projector, type LoggedOf } from './decorators.js';
import { HandlerProjection } from './handlers.js';
import { ServiceHost } from './host.js';
import { MemexModule } from './memex.module.js';
import { startService } from './bootstrap.js';
import { ProjectionRunner } from './projection.js';
import { bookkeepingOf } from './bookkeeping.js';

const migrations: Migration[] = [
  {
    name: '001_rows',
    async up(db) {
      await db.schema
        .createTable('rows')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('what', 'text', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('runs')
        .addColumn('size', 'integer', (c) => c.notNull())
        .execute();
    },
  },
];

interface Rows {
  rows: { id: string; what: string; seq: number };
  runs: { size: number };
}
type Trx = Transaction<Rows>;

/** Token names one by one; revocations in runs (to see the batch form get them together). */
@Injectable()
@Projector({ name: 'tokens_probe', migrations })
class TokensProbe {
  @On(TokenCreated)
  async created(trx: Trx, event: EventOf<typeof TokenCreated>, seq: number): Promise<void> {
    await trx.insertInto('rows').values({ id: event.data.id, what: event.data.name, seq }).execute();
  }

  @OnBatch(TokenRevoked)
  async revoked(trx: Trx, run: LoggedOf<typeof TokenRevoked>[]): Promise<void> {
    await trx.insertInto('runs').values({ size: run.length }).execute();
    for (const { event } of run)
      await trx.updateTable('rows').set({ what: 'revoked' }).where('id', '=', event.data.id).execute();
  }
}

@Module({ providers: [TokensProbe] })
class ProbeModule {}

let env: TestEnv;
let bus: Bus;
before(async () => {
  env = await createTestEnv();
  bus = await Bus.connect(env.config.natsUrl, 'handlers-test');
  await bus.ensureStreams();
});
after(async () => {
  await bus.close();
  await env.stop();
});

const owner = { kind: 'user' as const, id: 'owner' };
const token = (id: string) =>
  draftOf(TokenCreated, {
    subject: `token:${id}`,
    actor: owner,
    data: { id, name: `t-${id}`, labels: [], sha256: 'a'.repeat(64) },
  });

test('a projector with @On handlers is found, subscribed to only their types, and fed them typed', async () => {
  const app = await startService(
    (config) => ({
      module: ProbeModule,
      imports: [MemexModule.forService({ service: 'gateway', config, schema: 'tokens_probe' })],
    }),
    env.config,
  );
  const db: Kysely<Rows> = createDatabase(env.config.databaseUrl, { schema: 'tokens_probe' });
  try {
    const runner = app.get(ServiceHost).projector!;
    const info = await bus.jsm.consumers.info(EVENTS_STREAM, runner.durableName);
    // Both handled types share the noun `token`: one filter covers exactly them on NATS 2.9.
    const filters = info.config.filter_subjects ?? [info.config.filter_subject];
    assert.deepEqual(
      [...filters].sort(),
      bus.takesSeveralFilters ? ['memex.evt.token.created.>', 'memex.evt.token.revoked.>'] : ['memex.evt.token.*.>'],
    );
    const publisher = new EventPublisher(bus);
    const ids = [newId(), newId(), newId()];
    await publisher.publishAll(ids.map(token));
    const noteId = newId();
    await publisher.publish(NotePut, {
      subject: `item:${noteId}`,
      actor: owner,
      data: { id: noteId, title: 'n', body: 'b', markdown: noteMarkdownOf('b') },
    });
    const revoked = await publisher.publishAll(
      ids.slice(0, 2).map((id) => draftOf(TokenRevoked, { subject: `token:${id}`, actor: owner, data: { id } })),
    );
    await runner.waitFor(revoked.at(-1)!.seq, 10_000);
    const rows = await db.selectFrom('rows').select(['id', 'what']).orderBy('id').execute();
    assert.deepEqual(rows, [
      { id: ids[0], what: 'revoked' },
      { id: ids[1], what: 'revoked' },
      { id: ids[2], what: `t-${ids[2]}` },
    ]);
    const runs = await db.selectFrom('runs').select('size').execute();
    assert.equal(
      runs.reduce((n, r) => n + r.size, 0),
      2,
      'every revocation reached the batch handler once',
    );
  } finally {
    await db.destroy();
    await app.close();
  }
});

// An event whose shape changed: v1 had one `name`, v2 splits it. The log still holds v1 events.
const ProbeNamedV1 = defineEvent({
  type: 'probe.named',
  v: 1,
  owner: 'gateway',
  description: 'test: a name, whole',
  data: Type.Object({ id: Type.String(), name: Type.String() }),
  upcast: ({ id, name }) => ({ id, first: name.split(' ')[0]!, last: name.split(' ').slice(1).join(' ') }),
});
const ProbeNamed = defineEvent({
  type: 'probe.named',
  v: 2,
  owner: 'gateway',
  description: 'test: a name in two parts',
  data: Type.Object({ id: Type.String(), first: Type.String(), last: Type.String() }),
});

test('an event of an old version still projects, through its upcaster', async () => {
  const registry = new EventRegistry().register(ProbeNamedV1, ProbeNamed);
  class NamesProbe {
    @On(ProbeNamed)
    async named(trx: Trx, event: EventOf<typeof ProbeNamed>, seq: number): Promise<void> {
      await trx
        .insertInto('rows')
        .values({ id: event.data.id, what: `${event.data.last}, ${event.data.first}`, seq })
        .execute();
    }
  }
  const probe = new NamesProbe();
  const projection = new HandlerProjection(probe, registry);
  projection.add('named', { definitions: [ProbeNamed], batch: false });
  assert.throws(
    () => projection.add('named', { definitions: [ProbeNamedV1], batch: false }),
    /handlers take the latest version/,
  );

  const db: Kysely<Rows> = createDatabase(env.config.databaseUrl, { schema: 'names_probe' });
  const runner = new ProjectionRunner(
    bus,
    env.config.databaseUrl,
    bookkeepingOf(db),
    { name: 'names_probe', migrations },
    projection,
    ['memex.evt.probe.named.>'],
  );
  await runner.start();
  try {
    const publisher = new EventPublisher(bus, 'gateway', registry);
    const actor = owner;
    await publisher.publish(ProbeNamedV1, {
      subject: 'probe:old',
      actor,
      data: { id: 'old', name: 'Ada King Lovelace' },
    });
    const { seq } = await publisher.publish(ProbeNamed, {
      subject: 'probe:new',
      actor,
      data: { id: 'new', first: 'Alan', last: 'Turing' },
    });
    await runner.waitFor(seq, 10_000);
    assert.deepEqual(await db.selectFrom('rows').select(['id', 'what']).orderBy('id').execute(), [
      { id: 'new', what: 'Turing, Alan' },
      { id: 'old', what: 'King Lovelace, Ada' },
    ]);
  } finally {
    await runner.stop();
    await db.destroy();
  }
});

test('a catalog refuses an old version without an upcaster, and one type with two owners', () => {
  const { upcast: _, ...withoutUpcast } = ProbeNamedV1;
  assert.throws(
    () => new EventRegistry().register(withoutUpcast, ProbeNamed),
    /probe\.named@1 is older than v2 and has no upcast/,
  );
  assert.throws(
    () => new EventRegistry().register(ProbeNamedV1, { ...ProbeNamed, owner: 'ingest' }),
    /probe\.named has two owners: gateway and ingest/,
  );
});

test('an event no handler takes does not end a batch handler’s run', async () => {
  const runs: string[][] = [];
  class RunProbe {
    @OnBatch(TokenRevoked)
    async revoked(_trx: never, run: LoggedOf<typeof TokenRevoked>[]): Promise<void> {
      runs.push(run.map(({ event }) => event.data.id));
    }

    @On(TokenCreated)
    async created(_trx: never, event: EventOf<typeof TokenCreated>): Promise<void> {
      runs.push([`created ${event.data.id}`]);
    }
  }
  const envelope = (type: string, id: string) => ({
    id: newId(),
    type,
    v: 1,
    subject: `token:${id}`,
    occurred_at: '2026-01-01T00:00:00.000Z',
    recorded_at: '2026-01-01T00:00:00.000Z',
    actor: owner,
    labels: [],
    data: type === 'token.created' ? { id, name: id, labels: [], sha256: 'a'.repeat(64) } : { id },
  });
  // An import interleaves identity claims (no handler here) with what the projector takes.
  const types = ['token.revoked', 'identity.claimed', 'token.revoked', 'token.created', 'token.revoked'];
  const batch = types.map((type, i) => {
    const event = envelope(type, `t${i}`);
    return {
      seq: i + 1,
      // As read from the log: the type its subject names, the payload decoded when first read.
      type,
      get event() {
        if (type === 'identity.claimed') throw new Error('an event no handler takes was decoded');
        return event;
      },
      headers: undefined,
      pending: 0,
    };
  });
  await HandlerProjection.of(new RunProbe()).applyBatch({} as never, batch);
  assert.deepEqual(runs, [['t0', 't2'], ['created t3'], ['t4']]);
});
