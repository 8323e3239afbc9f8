import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AdminReplay,
  ItemsGet,
  MemexError,
  NotesPut,
  ScopesGet,
  ScopesSet,
  TokensCreate,
  TokensList,
  TokensRevoke,
} from '@memex/contracts';
import pg from 'pg';
import { startStack, type TestStack } from './stack.js';
import { snapshotSchema } from './snapshot.js';

describe('foundation through the gateway', () => {
  let stack: TestStack;
  before(async () => {
    stack = await startStack(['ingest']);
  });
  after(async () => stack.stop());

  test('healthz answers 200 with every service and the log sequence', async () => {
    const response = await fetch(`${stack.url}/healthz`);
    assert.equal(response.status, 200);
    const body = (await response.json()) as {
      status: string;
      log: { last_seq: number };
      services: { service: string; ready: boolean }[];
    };
    assert.equal(body.status, 'ok');
    assert.equal(typeof body.log.last_seq, 'number');
    assert.deepEqual(body.services.map((s) => [s.service, s.ready]).sort(), [
      ['gateway', true],
      ['ingest', true],
    ]);
  });

  test('a call without a valid token gets 401', async () => {
    const call = (headers: Record<string, string | undefined>) =>
      fetch(`${stack.url}/api/v1/memex/rpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(headers as Record<string, string>) },
        body: JSON.stringify({ method: 'memex.items.get', params: { id: 'x' } }),
      });
    for (const headers of [{}, { authorization: 'Bearer nope' }, { authorization: 'Basic abc' }]) {
      const response = await call(headers);
      assert.equal(response.status, 401);
      const body = (await response.json()) as { error: { code: string } };
      assert.equal(body.error.code, 'unauthorized');
    }
    const events = await fetch(`${stack.url}/api/v1/memex/events`);
    assert.equal(events.status, 401);
  });

  test('notes.put answers id and seq; items.get with min_seq reads it back', async () => {
    const put = await stack.owner.call(NotesPut, {
      body: '# Offsite\nThe whiteboard photo is in the Acme folder.',
      labels: ['client:acme'],
    });
    assert.match(put.id, /^[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.ok(put.seq > 0);
    const item = await stack.owner.call(ItemsGet, { id: put.id, min_seq: put.seq });
    assert.equal(item.kind, 'note');
    assert.equal(item.title, 'Offsite');
    assert.equal(item.text, '# Offsite\nThe whiteboard photo is in the Acme folder.');
    assert.deepEqual(item.labels, ['client:acme']);
    assert.deepEqual(item.made_by, { kind: 'user', id: 'owner' });
  });

  test('min_seq beyond the log times out with a clear error', async () => {
    const started = stack.config.minSeqTimeoutMs;
    stack.config.minSeqTimeoutMs = 300;
    try {
      await assert.rejects(stack.owner.call(ItemsGet, { id: 'x', min_seq: 10_000_000 }), (error: MemexError) => {
        assert.equal(error.code, 'timeout');
        assert.match(error.message, /not yet 10000000/);
        return true;
      });
    } finally {
      stack.config.minSeqTimeoutMs = started;
    }
  });

  test('unreadable and oversized bodies get clear errors in the API format', async () => {
    const post = (body: string) =>
      fetch(`${stack.url}/api/v1/memex/rpc`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.ownerToken}`, 'content-type': 'application/json' },
        body,
      });
    const broken = await post('{"method": "memex.notes.put", "params": {');
    assert.equal(broken.status, 400);
    assert.equal(((await broken.json()) as { error: { code: string } }).error.code, 'invalid_params');
    const huge = await post(
      JSON.stringify({ method: 'memex.notes.put', params: { body: 'x'.repeat(60 * 1024 * 1024) } }),
    );
    assert.equal(huge.status, 413);
    const error = ((await huge.json()) as { error: { code: string; message: string } }).error;
    assert.equal(error.code, 'too_large');
    assert.match(error.message, /larger than 56 MB/);
  });

  test('bad params are rejected naming the field', async () => {
    await assert.rejects(stack.owner.rpc('memex.notes.put', { body: 42 }), /params\.body: Expected string/);
    await assert.rejects(stack.owner.rpc('memex.notes.put', { body: 'x', colour: 'red' }), /params\.colour/);
    await assert.rejects(stack.owner.rpc('memex.nope', {}), /unknown method "memex.nope"/);
  });

  test('agent tokens: created with labels, scoped, listed, revoked', async () => {
    const acme = await stack.owner.call(NotesPut, { body: 'Acme renewal is due in March', labels: ['client:acme'] });
    const other = await stack.owner.call(NotesPut, { body: 'Globex notes', labels: ['client:globex'] });
    const created = await stack.owner.call(TokensCreate, { labels: ['client:acme'] });
    assert.match(created.token, /^mxa_/);
    const agent = stack.clientFor(created.token);
    const seen = await agent.call(ItemsGet, { id: acme.id, min_seq: Math.max(created.seq, other.seq) });
    assert.equal(seen.text, 'Acme renewal is due in March');
    await assert.rejects(agent.call(ItemsGet, { id: other.id }), (error: MemexError) => error.code === 'not_found');
    await assert.rejects(agent.call(TokensList, {}), (error: MemexError) => error.code === 'forbidden');
    // A note the agent writes is attributed to its token and carries its labels.
    const own = await agent.call(NotesPut, { body: 'Agent insight' });
    const ownItem = await stack.owner.call(ItemsGet, { id: own.id, min_seq: own.seq });
    assert.deepEqual(ownItem.made_by, { kind: 'session', id: `token:${created.id}` });
    assert.deepEqual(ownItem.labels, ['client:acme']);

    const listed = await stack.owner.call(TokensList, {});
    assert.ok(listed.tokens.some((t) => t.id === created.id && t.revoked_at === null));
    const revoked = await stack.owner.call(TokensRevoke, { id: created.id });
    await stack.owner.call(TokensList, { min_seq: revoked.seq });
    // The tokens read model sees only token events, yet a later sequence is honoured too.
    const later = await stack.owner.call(NotesPut, { body: 'after the revocation' });
    await stack.owner.call(TokensList, { min_seq: later.seq });
    await assert.rejects(agent.call(ItemsGet, { id: acme.id }), (error: MemexError) => error.code === 'unauthorized');
  });

  test('a token works as soon as it is made, and no longer once its revocation is answered, however late the tokens read model', async () => {
    const note = await stack.owner.call(NotesPut, { body: 'Initech plans', labels: ['client:initech'] });
    // Hold the gateway's projector back: it cannot write tokens, while reading them goes on.
    const lock = new pg.Client({ connectionString: stack.config.databaseUrl });
    await lock.connect();
    const holdTable = async (ms: number, table = 'tokens') => {
      await lock.query('begin');
      await lock.query(`lock table gateway.${table} in share mode`);
      setTimeout(() => void lock.query('commit'), ms);
    };
    try {
      await holdTable(1_000);
      const created = await stack.owner.call(TokensCreate, { labels: ['client:initech'] });
      const agent = stack.clientFor(created.token);
      assert.equal((await agent.call(ItemsGet, { id: note.id, min_seq: note.seq })).text, 'Initech plans');

      // A scope rule that narrows what the token sees holds once answered.
      const { rules } = await stack.owner.call(ScopesGet, {});
      await holdTable(1_000, 'scope_rules');
      await stack.owner.call(ScopesSet, { rules: [{ when: '*', kinds: ['email'] }] });
      await assert.rejects(agent.call(ItemsGet, { id: note.id }), (error: MemexError) => error.code === 'not_found');
      await stack.owner.call(ScopesSet, { rules });
      assert.equal((await agent.call(ItemsGet, { id: note.id })).text, 'Initech plans');

      await holdTable(1_000);
      await stack.owner.call(TokensRevoke, { id: created.id });
      await assert.rejects(agent.call(ItemsGet, { id: note.id }), (error: MemexError) => error.code === 'unauthorized');
    } finally {
      await lock.end();
    }
  });

  test('the event stream resumes from a sequence without gaps, within scope', async () => {
    const written: number[] = [];
    for (let i = 0; i < 30; i++) written.push((await stack.owner.call(NotesPut, { body: `stream note ${i}` })).seq);
    const from = written[10]!;
    const abort = new AbortController();
    const seqs: number[] = [];
    for await (const { seq, event } of stack.owner.events({
      fromSeq: from,
      types: ['note.put'],
      signal: abort.signal,
    })) {
      assert.equal(event.type, 'note.put');
      seqs.push(seq);
      if (seq === written[written.length - 1]) abort.abort();
    }
    assert.deepEqual(seqs, written.slice(10));

    // Resuming with Last-Event-ID continues right after it.
    const response = await fetch(`${stack.url}/api/v1/memex/events?types=note.put`, {
      headers: { authorization: `Bearer ${stack.ownerToken}`, 'last-event-id': String(written[27]) },
    });
    const reader = response.body!.getReader();
    let text = '';
    while (!text.includes(`id: ${written[29]}`)) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    assert.deepEqual(ids, [written[28], written[29]]);

    // An agent without labels sees notes without labels, never token events.
    const token = await stack.owner.call(TokensCreate, { labels: [] });
    const agent = stack.clientFor(token.token);
    const agentAbort = new AbortController();
    const agentTypes = new Set<string>();
    let last = 0;
    for await (const { seq, event } of agent.events({ fromSeq: 1, signal: agentAbort.signal })) {
      agentTypes.add(event.type);
      assert.deepEqual(event.labels, []);
      last = seq;
      if (seq >= written[29]!) agentAbort.abort();
    }
    assert.equal(last, written[29]);
    assert.deepEqual([...agentTypes], ['note.put']);
  });

  test('memex.admin.replay rebuilds the read model equal row for row', async () => {
    for (let i = 0; i < 200; i++)
      await stack.owner.call(NotesPut, { body: `replay note ${i}`, labels: i % 2 ? ['a'] : [] });
    const last = await stack.owner.call(NotesPut, { body: 'last' });
    await stack.owner.call(ItemsGet, { id: last.id, min_seq: last.seq });
    const before = await snapshotSchema(stack.config.databaseUrl, 'ingest');
    const result = await stack.owner.call(AdminReplay, { projector: 'ingest' });
    assert.ok(result.events >= 201, `replayed ${result.events} events`);
    assert.ok(result.events_per_second > 0);
    const afterReplay = await snapshotSchema(stack.config.databaseUrl, 'ingest');
    assert.deepEqual(afterReplay, before);
    // The live projector goes on after the switch.
    const next = await stack.owner.call(NotesPut, { body: 'after replay' });
    const item = await stack.owner.call(ItemsGet, { id: next.id, min_seq: next.seq });
    assert.equal(item.text, 'after replay');
  });
});
