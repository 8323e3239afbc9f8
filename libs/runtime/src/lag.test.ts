import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { NotePut, noteMarkdownOf } from '@memex/contracts';
import { Bus, EVENTS_STREAM, EventPublisher, newId, typeFilter } from '@memex/bus';
import { createTestEnv, type TestEnv } from '@memex/testing';
import { projectorConsumer, projectorLags } from './lag.js';

let env: TestEnv;
let bus: Bus;
before(async () => {
  env = await createTestEnv();
  bus = await Bus.connect(env.config.natsUrl, 'lag-test');
  await bus.ensureStreams();
  const publisher = new EventPublisher(bus);
  for (let i = 0; i < 5; i++) {
    const id = newId();
    await publisher.publish(NotePut, {
      subject: `item:${id}`,
      actor: { kind: 'user', id: 'owner' },
      data: { id, title: `note ${i}`, body: 'b', markdown: noteMarkdownOf('b') },
    });
  }
  const consumer = (name: string, filter?: string) =>
    bus.jsm.consumers.add(EVENTS_STREAM, {
      durable_name: name,
      ack_policy: AckPolicy.All,
      deliver_policy: DeliverPolicy.All,
      ...(filter ? { filter_subject: filter } : {}),
    });
  await consumer(projectorConsumer('graph'));
  await consumer(projectorConsumer('head'), typeFilter('trigger.*'));
  // Not a projector: a work queue with a filter, whose state the lags must not read.
  await consumer('media_photos', typeFilter('item.ingested'));
});
after(async () => {
  await bus.close();
  await env.stop();
});

test("projectors' lags are read by their consumers' names, not the log's other consumers", async () => {
  assert.deepEqual(
    (await bus.consumerNames(EVENTS_STREAM)).sort(),
    ['media_photos', projectorConsumer('graph'), projectorConsumer('head')].sort(),
  );
  assert.deepEqual(
    [...(await projectorLags(bus))],
    [
      ['graph', 5],
      ['head', 0],
    ],
  );
  assert.deepEqual(
    [...(await projectorLags(bus, ['graph', 'insights']))],
    [['graph', 5]],
    'of the projectors asked for; one without a consumer has no lag to read',
  );
});
