import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { HeadEnroll, HeadStatus } from '@memex/contracts';
import { Bus, callMethod, readLog } from '@memex/bus';
import { startService } from '@memex/runtime';
import { createTestEnv, waitUntil } from '@memex/testing';
import { credentialEnvName, credentialsProvider, EnvCredentials } from '@memex/credentials';
import { HeadModule } from './head.module.js';
import { FakeHead } from './testing/fake-head.js';

/** Every file under a folder, read as text (the memex's home: blobs, head/, scopes…). */
function filesUnder(dir: string): string {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => fs.readFileSync(path.join(entry.parentPath, entry.name)).toString('latin1'))
    .join('\n');
}

test('credentials: the environment wins; otherwise the enrolled head answers, held only in memory (not in the log, the database or MEMEX_HOME)', async () => {
  const env = await createTestEnv();
  const fake = new FakeHead();
  await fake.start();
  const head = await startService((c) => HeadModule.register(c), env.config);
  const bus = await Bus.connect(env.config.natsUrl, 'credentials-test');
  try {
    assert.equal(credentialEnvName('imap:fastmail.com'), 'MEMEX_CREDENTIAL_IMAP_FASTMAIL_COM');
    const credentials = credentialsProvider(bus, { MEMEX_CREDENTIAL_IMAP_FASTMAIL: 'configured' });
    await assert.rejects(credentials.get('openai'), /not <kind>:<which>/);
    await assert.rejects(
      credentials.get('model:openai'),
      /no credential "model:openai": MEMEX_CREDENTIAL_MODEL_OPENAI is not set; no head is enrolled/,
    );

    await callMethod(bus, HeadEnroll, { url: fake.enrollUrl, token: fake.newToken() });
    await waitUntil(async () => (await callMethod(bus, HeadStatus, {})).state === 'connected', 'the link', {
      timeoutMs: 30_000,
    });
    const model = await credentials.get('model:openai');
    assert.equal(model.source, 'head');
    assert.match(model.secret, /^short-lived-model:openai-/);
    assert.ok(model.expiresAt && model.expiresAt.getTime() > Date.now());
    assert.deepEqual(await credentials.get('model:openai'), model, 'held until shortly before it expires');
    const asked = () => fake.asked.filter((a) => a.method === 'credentials.get').map((a) => a.request.name);
    assert.deepEqual(asked(), ['model:openai']);

    const mail = await credentials.get('imap:fastmail');
    assert.deepEqual([mail.source, mail.secret], ['env', 'configured']);
    assert.deepEqual(asked(), ['model:openai'], 'a configured secret never goes to the head');
    assert.equal(
      await new EnvCredentials({}).get('imap:fastmail').catch((e: Error) => e.message),
      'MEMEX_CREDENTIAL_IMAP_FASTMAIL is not set',
    );

    fake.withheldCredentials.add('model:anthropic');
    await assert.rejects(credentials.get('model:anthropic'), /the head has no credential "model:anthropic"/);

    // Nothing of the secret was written anywhere.
    const logged: unknown[] = [];
    for await (const { event } of readLog(bus, { untilCaughtUp: true })) logged.push(event);
    assert.ok(logged.length > 0);
    assert.doesNotMatch(JSON.stringify(logged), /short-lived/);
    const dump = execFileSync('pg_dump', ['--data-only', env.config.databaseUrl], { maxBuffer: 64 << 20 }).toString();
    assert.match(dump, /head/, 'the dump reads the head schema');
    assert.doesNotMatch(dump, /short-lived/);
    assert.doesNotMatch(filesUnder(env.config.home), /short-lived/);

    await fake.stop();
    await waitUntil(async () => (await callMethod(bus, HeadStatus, {})).state !== 'connected', 'the link to drop', {
      timeoutMs: 30_000,
    });
    await assert.rejects(credentials.get('model:mistral'), /the head link is (backing_off|connecting)/);
  } finally {
    await bus.close();
    await head.close();
    await fake.stop().catch(() => undefined);
    await env.stop();
  }
});

test('credentials: a memex that runs no head service has no head attached — a missing secret is not found, not an outage', async () => {
  const env = await createTestEnv();
  const bus = await Bus.connect(env.config.natsUrl, 'credentials-no-head');
  try {
    await assert.rejects(
      credentialsProvider(bus, {}).get('model:openai'),
      (error: Error & { code?: string }) =>
        error.code === 'not_found' && /no head is attached \(no head service runs\)/.test(error.message),
    );
  } finally {
    await bus.close();
    await env.stop();
  }
});
