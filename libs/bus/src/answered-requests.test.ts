import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { NotePut, noteMarkdownOf } from '@memex/contracts';
import { createTestEnv, type TestEnv } from '@memex/testing';
import { Bus } from './bus.js';
import { EventPublisher, newId } from './publisher.js';

/** nats-core's errors module, the very instance its requests build their errors from. */
const require = createRequire(import.meta.url);
const errors = require(path.join(path.dirname(require.resolve('@nats-io/nats-core/internal')), 'errors.js')) as {
  RequestError: new (message?: string) => Error;
};

let env: TestEnv;
let bus: Bus;
before(async () => {
  env = await createTestEnv();
  bus = await Bus.connect(env.config.natsUrl, 'answered-requests-test');
  await bus.ensureStreams();
});
after(async () => {
  await bus.close();
  await env.stop();
});

test('an answered request builds no error to throw away; one without an answer still fails as nats.js says', async () => {
  const Library = errors.RequestError;
  let built = 0;
  errors.RequestError = class extends Library {
    constructor(message?: string) {
      super(message);
      built++;
    }
  };
  const echo = bus.nc.subscribe('test.echo', { callback: (_error, msg) => void msg.respond(msg.data) });
  try {
    for (let i = 0; i < 20; i++) assert.equal((await bus.nc.request('test.echo', `ping ${i}`)).string(), `ping ${i}`);
    const id = newId();
    await new EventPublisher(bus).publish(NotePut, {
      subject: `item:${id}`,
      actor: { kind: 'user', id: 'owner' },
      data: { id, title: 't', body: 'b', markdown: noteMarkdownOf('b') },
    });
    assert.equal(built, 0, 'twenty answered requests and a JetStream publish');
    await assert.rejects(bus.nc.request('test.nobody', 'x', { timeout: 1_000 }), (error: Error) => {
      assert.ok(error instanceof Library, `${error.name}: ${error.message}`);
      return true;
    });
  } finally {
    echo.unsubscribe();
    errors.RequestError = Library;
  }
});
