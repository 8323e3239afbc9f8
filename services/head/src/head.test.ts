import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import * as grpc from '@grpc/grpc-js';
import {
  CommitmentExtracted,
  EntityGet,
  EntityMerged,
  HeadEnroll,
  HeadMemoriesImport,
  HeadStatus,
  ItemsGet,
  HeadUnenroll,
  Inbox,
  Ingest,
  ItemIngested,
  LinkAdded,
  LinksInferred,
  ScopeRulesSet,
  type MethodDefinition,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { Bus, callMethod, EventPublisher, newId, readLog } from '@memex/bus';
import { serviceHealth, startService } from '@memex/runtime';
import { createTestEnv, itemMeta, waitUntil, type TestEnv } from '@memex/testing';
import { IngestModule } from '@memex/ingest';
import { GraphModule } from '@memex/graph';
import { HeadModule } from './head.module.js';
import { CredentialsStore } from './domain/credentials.js';
import { certificateSha256 } from './domain/pki.js';
import { HEAD_METHODS, HeadConnection } from './link/head-api.js';
import { memoryNoteId } from './domain/memories.js';
import { SessionKnowledge } from './link/session-knowledge.js';
import { FakeHead } from './testing/fake-head.js';

interface World {
  env: TestEnv;
  bus: Bus;
  head: INestApplicationContext;
  call<M extends MethodDefinition>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>>;
  restartHead(): Promise<void>;
  stop(): Promise<void>;
}

async function world(options: { ingest?: boolean; graph?: boolean } = {}): Promise<World> {
  const env = await createTestEnv();
  const ingest = options.ingest ? await startService((c) => IngestModule.register(c), env.config) : undefined;
  const graph = options.graph ? await startService((c) => GraphModule.register(c), env.config) : undefined;
  let head = await startService((c) => HeadModule.register(c), env.config);
  const bus = await Bus.connect(env.config.natsUrl, 'head-test');
  const w: World = {
    env,
    bus,
    head,
    call: (method, params) => callMethod(bus, method, params),
    async restartHead() {
      await head.close();
      head = await startService((c) => HeadModule.register(c), env.config);
      w.head = head;
    },
    async stop() {
      await bus.close();
      await head.close();
      await graph?.close();
      await ingest?.close();
      await env.stop();
    },
  };
  return w;
}

/** What the head service's health reports wrong, one problem a line. */
async function healthProblems(w: World): Promise<string> {
  const health = await serviceHealth(w.bus, 'head');
  return (health.problems ?? []).join('\n');
}

async function connected(w: World): Promise<ResultOf<typeof HeadStatus>> {
  let status: ResultOf<typeof HeadStatus> | undefined;
  await waitUntil(
    async () => (status = await w.call(HeadStatus, {})).state === 'connected',
    'the head link to connect',
    {
      timeoutMs: 30_000,
    },
  );
  return status!;
}

test('enrollment: a CSR for a one-time token, the certificate kept 0600 under MEMEX_HOME, the link dialled; a used token, a wrong pin and an unusable certificate are refused', async () => {
  const fake = new FakeHead();
  await fake.start();
  const w = await world();
  try {
    const token = fake.newToken();
    const enrolled = await w.call(HeadEnroll, {
      url: fake.enrollUrl,
      token,
      ca_sha256: certificateSha256(fake.ca.pem),
    });
    assert.match(enrolled.subject, /OU=memex/);
    assert.equal(enrolled.ca_sha256, certificateSha256(fake.ca.pem));
    await fake.linked();
    const status = await connected(w);
    assert.equal(status.enrolled, true);
    assert.equal(fake.links.length, 1);
    assert.match(fake.links[0]!.subject, /OU=memex/);

    const dir = new CredentialsStore(w.env.config.home).dir;
    assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
    for (const file of fs.readdirSync(dir)) {
      assert.equal(fs.statSync(path.join(dir, file)).mode & 0o777, 0o600, file);
    }
    const logged = [];
    for await (const { event } of readLog(w.bus, { untilCaughtUp: true })) logged.push(event);
    const enrolledEvent = logged.find((e) => e.type === 'head.enrolled');
    assert.ok(enrolledEvent);
    assert.doesNotMatch(JSON.stringify(logged), /PRIVATE KEY/, 'the key never reaches the log');

    await assert.rejects(w.call(HeadEnroll, { url: fake.enrollUrl, token }), /already used/);
    const other = new FakeHead();
    await assert.rejects(
      w.call(HeadEnroll, { url: fake.enrollUrl, token: fake.newToken(), ca_sha256: certificateSha256(other.ca.pem) }),
      /not the pinned one/,
    );
    fake.certificateStartsDaysAgo = 3;
    fake.certificateDays = 1;
    await assert.rejects(w.call(HeadEnroll, { url: fake.enrollUrl, token: fake.newToken() }), /not valid now/);
    fake.certificateStartsDaysAgo = 0;
    fake.certificateDays = 365;
    fake.issuedRole = 'worker';
    await assert.rejects(
      w.call(HeadEnroll, { url: fake.enrollUrl, token: fake.newToken() }),
      /lacks the role OU=memex/,
    );
    // None of the refusals touched the working link.
    assert.equal((await w.call(HeadStatus, {})).state, 'connected');

    await w.call(HeadUnenroll, {});
    assert.equal(fs.existsSync(dir), false);
    assert.equal((await w.call(HeadStatus, {})).state, 'not_enrolled');
  } finally {
    await w.stop();
    await fake.stop();
  }
});

test('the link comes back after the head restarts, and a revoked certificate is refused by the head', async () => {
  const fake = new FakeHead();
  await fake.start();
  const w = await world();
  try {
    await w.call(HeadEnroll, { url: fake.enrollUrl, token: fake.newToken() });
    await connected(w);
    await fake.restart();
    await fake.linked();
    const status = await connected(w);
    assert.ok(status.reconnects >= 1);
    assert.deepEqual(
      await fake.call('memex.head.status', {}, { owner: true }).then((s) => (s as { state: string }).state),
      'connected',
    );

    fake.revoke(new CredentialsStore(w.env.config.home).read()!.certPem);
    await fake.restart();
    await waitUntil(
      async () => /revoked/.test((await w.call(HeadStatus, {})).last_error ?? ''),
      'the head to refuse the revoked certificate',
      {
        timeoutMs: 30_000,
      },
    );
    assert.notEqual((await w.call(HeadStatus, {})).state, 'connected');
    assert.match(await healthProblems(w), /head link \w+: .*revoked/);
  } finally {
    await w.stop();
    await fake.stop();
  }
});

test('a relayed call runs within the scope the head stamped: a notes session never sees mail and cannot widen itself, until the owner sets rules that open mail to notes', async () => {
  const fake = new FakeHead();
  await fake.start();
  const w = await world({ ingest: true });
  try {
    await w.call(HeadEnroll, { url: fake.enrollUrl, token: fake.newToken() });
    await fake.linked();
    const mail =
      'From: Ann <ann@example.com>\r\nTo: me@example.com\r\nSubject: salary review\r\nMessage-ID: <m1@example.com>\r\nDate: Mon, 2 Nov 2026 10:00:00 +0000\r\n\r\nConfidential.\r\n';
    const { results } = await callMethod(w.bus, Ingest, {
      items: [{ type: 'message/rfc822', text: mail, source: { kind: 'mbox', id: 'a' } }],
    });
    const id = results[0]!.id!;
    const { seq } = await callMethod(w.bus, Ingest, {
      items: [{ type: 'text/plain', text: 'a note', source: { kind: 'upload' } }],
    });
    const asOwner = (await fake.call('memex.items.get', { id, min_seq: seq }, { owner: true })) as { title: string };
    assert.equal(asOwner.title, 'salary review');
    await assert.rejects(
      fake.call('memex.items.get', { id }, { labels: ['notes'] }),
      (e: Error & { code?: string }) => e.code === 'not_found',
    );
    const asMail = (await fake.call('memex.items.get', { id }, { labels: ['mail'] })) as { title: string };
    assert.equal(asMail.title, 'salary review');
    await assert.rejects(
      fake.call('memex.tokens.create', { labels: ['mail'] }, { labels: ['notes'] }),
      (e: Error & { code?: string }) => e.code === 'forbidden',
    );
    await assert.rejects(
      fake.call('memex.items.get', {}, { labels: ['notes'] }),
      (e: Error & { code?: string }) => e.code === 'invalid_params',
    );
    // The owner's scope rules (memex.scopes.set logs them) apply to the head's next call.
    await new EventPublisher(w.bus).publish(ScopeRulesSet, {
      subject: 'scope_rules:all',
      actor: { kind: 'user', id: 'owner' },
      data: { rules: [{ when: 'notes', kinds: ['email'] }] },
    });
    const asNotes = (await fake.call('memex.items.get', { id }, { labels: ['notes'] })) as { title: string };
    assert.equal(asNotes.title, 'salary review');
    await assert.rejects(
      fake.call('memex.items.get', { id }, { labels: ['mail'] }),
      (e: Error & { code?: string }) => e.code === 'not_found',
    );
  } finally {
    await w.stop();
    await fake.stop();
  }
});

test('the memex can ask the head only its five methods; anything else is refused by the head', async () => {
  const fake = new FakeHead();
  await fake.start();
  const w = await world();
  try {
    await w.call(HeadEnroll, { url: fake.enrollUrl, token: fake.newToken() });
    const connection = new HeadConnection(new CredentialsStore(w.env.config.home).read()!);
    try {
      assert.deepEqual(Object.keys(connection.api).sort(), [
        'credentialsGet',
        'notify',
        'sessionsDigest',
        'templatesRun',
        'workflowsStart',
      ]);
      assert.equal(HEAD_METHODS.length, 5);
      const credential = await connection.api.credentialsGet({ name: 'openai' });
      assert.match(credential.secret, /^short-lived-openai-[0-9a-f]{12}$/);
      const refused = await new Promise<grpc.ServiceError>((resolve) =>
        connection.client.makeUnaryRequest(
          '/memex.head.v1.Head/SettingsChange',
          (x: Buffer) => x,
          (x: Buffer) => x,
          Buffer.alloc(0),
          { deadline: Date.now() + 10_000 },
          (error) => resolve(error!),
        ),
      );
      assert.equal(refused.code, grpc.status.UNIMPLEMENTED);
    } finally {
      connection.close();
    }
  } finally {
    await w.stop();
    await fake.stop();
  }
});

test('a trigger fires once per matching event within its scope, across a restart of the memex', async () => {
  const fake = new FakeHead();
  await fake.start();
  const w = await world();
  const tool = new EventPublisher(w.bus);
  let n = 0;
  const mailFrom = (address: string, labels: string[] = [], origin: 'mirrored' | 'imported' = 'mirrored') => {
    const id = newId();
    n++;
    return tool.publish(ItemIngested, {
      subject: `item:${id}`,
      actor: { kind: 'connector', id: 'gmail:me@example.com' },
      labels,
      kind: 'email',
      data: {
        id,
        ...itemMeta('email', { from: [{ name: '', address }], to: [{ name: '', address: 'me@example.com' }] }),
        revision: 1,
        title: `message ${n}`,
        source: { kind: 'gmail', id: 'me@example.com' },
        external_id: `g${n}`,
        identity: `message-id:m${n}@example.com`,
        origin,
        content_type: 'message/rfc822',
        content_sha256: '0'.repeat(64),
        size: 1,
        text_sha256: '0'.repeat(64),
        text_length: 1,
      },
    });
  };
  try {
    await w.call(HeadEnroll, { url: fake.enrollUrl, token: fake.newToken() });
    await fake.linked();
    const added = (await fake.call(
      'memex.triggers.add',
      { name: 'key contact', on: 'mail.received', filter: { from: '@acme.example' }, action: { workflow: 'triage' } },
      { labels: ['mail'], session: 'automation-1' },
    )) as { id: string };
    // A session without mail registers the same trigger: it must never fire for mail.
    await fake.call(
      'memex.triggers.add',
      { name: 'blind', on: 'mail.received', filter: { from: '@acme.example' }, action: { notify: 'mail' } },
      { labels: ['research'], session: 'automation-2' },
    );
    await mailFrom('ann@acme.example');
    await mailFrom('bob@elsewhere.example');
    await mailFrom('cy@acme.example', [], 'imported'); // archive mail never fires mail.received
    await mailFrom('dee@acme.example');
    const starts = () => fake.asked.filter((a) => a.method === 'workflows.start');
    await waitUntil(async () => starts().length === 2, 'two workflow starts', { timeoutMs: 30_000 });

    await w.restartHead();
    await fake.linked();
    await mailFrom('eve@acme.example');
    await waitUntil(async () => starts().length === 3, 'a third workflow start after the restart', {
      timeoutMs: 30_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const keys = starts().map((s) => String(s.request.dedupe_key));
    assert.equal(new Set(keys).size, 3, 'each event started once');
    assert.ok(keys.every((k) => k.startsWith(`${added.id}:`)));
    assert.deepEqual(
      starts().map((s) => (JSON.parse(String(s.request.input_json)) as { title: string }).title),
      ['message 1', 'message 4', 'message 5'],
    );
    assert.deepEqual(starts()[0]!.request.labels, ['mail']);
    assert.equal(fake.asked.filter((a) => a.method === 'notify').length, 0, 'the notes-less trigger saw no mail');
    const listed = (await fake.call('memex.triggers.list', {}, { labels: ['mail'], session: 'x' })) as {
      triggers: { id: string; fired: number }[];
    };
    assert.deepEqual(
      listed.triggers.map((t) => [t.id, t.fired]),
      [[added.id, 3]],
    );
  } finally {
    await w.stop();
    await fake.stop();
  }
});

test('entity.changed fires for the things a link, an inference or a merge changes, by key or kind, within the trigger’s scope', async () => {
  const fake = new FakeHead();
  await fake.start();
  const w = await world();
  const tool = new EventPublisher(w.bus);
  const link = (src: string, dst: string) =>
    tool.publish(LinkAdded, {
      subject: `link:${newId()}`,
      actor: { kind: 'user', id: 'owner' },
      data: {
        link_id: newId(),
        src,
        rel: 'works_at',
        dst,
        confidence: 1,
        evidence: [],
        basis: 'observed',
        made_by: 'user',
      },
    });
  try {
    await w.call(HeadEnroll, { url: fake.enrollUrl, token: fake.newToken() });
    await fake.linked();
    const owner = { owner: true };
    await fake.call(
      'memex.triggers.add',
      {
        name: 'ann',
        on: 'entity.changed',
        filter: { thing: 'person:ann@example.com' },
        action: { workflow: 'ann-changed' },
      },
      owner,
    );
    await fake.call(
      'memex.triggers.add',
      { name: 'orgs', on: 'entity.changed', filter: { kind: 'org' }, action: { notify: 'org' } },
      owner,
    );
    await fake.call(
      'memex.triggers.add',
      { name: 'topics', on: 'entity.changed', filter: { kind: 'topic' }, action: { workflow: 'topic-watch' } },
      { labels: ['research'], session: 'watcher' },
    );
    await assert.rejects(
      fake.call(
        'memex.triggers.add',
        { name: 'x', on: 'entity.changed', filter: { from: 'a@b.c' }, action: { notify: 'x' } },
        owner,
      ),
      /a trigger on entity.changed cannot filter on from/,
    );

    await link('person:ann@example.com', 'org:acme.example');
    await link('person:bob@example.com', 'person:cy@example.com');
    // The owner's link about a topic reveals no item: a session's trigger never sees it.
    await link('topic:salaries', 'person:bob@example.com');
    const note = newId();
    await tool.publish(LinksInferred, {
      subject: `item:${note}`,
      actor: { kind: 'pipeline', id: 'understand' },
      kind: 'note',
      labels: ['research'],
      data: {
        made_by: 'understand@1',
        item_id: note,
        links: [{ src: `item:${note}`, rel: 'about', dst: 'topic:memex', confidence: 0.8 }],
      },
    });
    await tool.publish(EntityMerged, {
      subject: 'entity:person:ann@example.com',
      actor: { kind: 'user', id: 'owner' },
      data: { merge_id: newId(), from: 'person:ann@old.example', into: 'person:ann@example.com' },
    });
    const starts = () => fake.asked.filter((a) => a.method === 'workflows.start');
    const notes = () => fake.asked.filter((a) => a.method === 'notify');
    await waitUntil(async () => starts().length === 3 && notes().length === 1, 'three starts and a notification', {
      timeoutMs: 30_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.deepEqual(
      starts().map((s) => [s.request.name, (JSON.parse(String(s.request.input_json)) as { things: string[] }).things]),
      [
        ['ann-changed', ['person:ann@example.com', 'org:acme.example']],
        ['topic-watch', ['topic:memex']],
        ['ann-changed', ['person:ann@old.example', 'person:ann@example.com']],
      ],
    );
    assert.deepEqual(starts()[1]!.request.labels, ['research']);
    assert.equal(notes().length, 1);
    assert.equal(notes()[0]!.request.message, 'changed: person:ann@example.com, org:acme.example');
  } finally {
    await w.stop();
    await fake.stop();
  }
});

test('commitment.due fires once for an open commitment whose time came, within the trigger’s scope, across a restart; the inbox lists what is due', async () => {
  process.env.MEMEX_HEAD_DUE_POLL_MS = '300';
  const fake = new FakeHead();
  await fake.start();
  const w = await world({ ingest: true, graph: true });
  try {
    await w.call(HeadEnroll, { url: fake.enrollUrl, token: fake.newToken() });
    await fake.linked();
    await fake.call(
      'memex.triggers.add',
      {
        name: 'promised ann',
        on: 'commitment.due',
        filter: { to: 'ann@example.com' },
        action: { workflow: 'follow-up' },
      },
      { owner: true },
    );
    // A session without mail: the commitment below was read in a mail, so it never sees it.
    await fake.call(
      'memex.triggers.add',
      { name: 'blind', on: 'commitment.due', action: { notify: 'due' } },
      { labels: ['research'], session: 'r' },
    );
    await assert.rejects(
      fake.call(
        'memex.triggers.add',
        { name: 'x', on: 'commitment.due', filter: { thing: 'org:a' }, action: { notify: 'x' } },
        { owner: true },
      ),
      /a trigger on commitment.due cannot filter on thing/,
    );
    const mail =
      'From: Me <me@example.com>\r\nTo: Ann <ann@example.com>\r\nSubject: the draft\r\nMessage-ID: <due1@example.com>\r\nDate: Mon, 30 Nov 2026 10:00:00 +0000\r\n\r\nI will send the draft shortly.\r\n';
    const { results } = await callMethod(w.bus, Ingest, {
      items: [{ type: 'message/rfc822', text: mail, source: { kind: 'mbox', id: 'a' } }],
    });
    const item = results[0]!.id!;
    const soon = new Date(Date.now() + 2000).toISOString();
    const promise = (key: string, to: string, due: string) => ({
      key,
      kind: 'promise' as const,
      by: [{ address: 'me@example.com' }],
      to: [{ address: to }],
      what: `send the draft to ${to}`,
      due,
      due_text: 'shortly',
      quote: 'I will send the draft shortly.',
      start: 0,
      end: 29,
      confidence: 0.9,
    });
    await new EventPublisher(w.bus).publish(CommitmentExtracted, {
      subject: `item:${item}`,
      actor: { kind: 'pipeline', id: 'commitments' },
      kind: 'email',
      labels: [],
      data: {
        item_id: item,
        revision: 1,
        made_by: 'commitments@1',
        commitments: [
          promise('c1', 'ann@example.com', soon),
          promise('c2', 'bob@example.com', soon),
          // Due long before the trigger existed: the archive's backlog fires nothing.
          promise('c3', 'ann@example.com', '2020-01-01'),
        ],
      },
    });
    const starts = () => fake.asked.filter((a) => a.method === 'workflows.start');
    await waitUntil(async () => starts().length === 1, 'the follow-up workflow', { timeoutMs: 30_000 });
    await w.restartHead();
    await fake.linked();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(starts().length, 1, 'once, across a restart');
    const input = JSON.parse(String(starts()[0]!.request.input_json)) as { event: string; what: string; due: string };
    assert.deepEqual(
      [input.event, input.what, input.due],
      ['commitment.due', 'send the draft to ann@example.com', soon],
    );
    assert.equal(fake.asked.filter((a) => a.method === 'notify').length, 0, 'the mail-less trigger saw nothing');

    const inbox = await w.call(Inbox, {});
    // Soonest first: the overdue one, then the two due together.
    assert.equal(inbox.commitments_due[0]!.key, 'c3');
    assert.deepEqual(inbox.commitments_due.map((c) => c.key).sort(), ['c1', 'c2', 'c3']);
    const blind = (await fake.call('memex.inbox', {}, { labels: ['research'], session: 'r' })) as {
      commitments_due: unknown[];
    };
    assert.deepEqual(blind.commitments_due, []);
  } finally {
    delete process.env.MEMEX_HEAD_DUE_POLL_MS;
    await w.stop();
    await fake.stop();
  }
});

test("a session's digest, output, web page and memory become items linked to the session, attributed to it", async () => {
  const fake = new FakeHead();
  await fake.start();
  const w = await world({ ingest: true, graph: true });
  try {
    await w.call(HeadEnroll, { url: fake.enrollUrl, token: fake.newToken() });
    await fake.linked();
    const empty = { asked: [], decided: [], found: [], produced: [], files: [], hosts: [], repos: [] };
    fake.digests = [
      {
        ...empty,
        session: 's-42',
        title: 'Fix the Acme invoice export',
        labels: ['client:acme'],
        started_at: '2026-11-30T09:00:00Z',
        ended_at: '2026-11-30T10:00:00Z',
        asked: ['Why does the invoice export drop VAT lines?'],
        decided: ['Round per line, not per invoice'],
        found: ['The exporter summed before rounding'],
        produced: ['a patch to export.py'],
        files: ['billing/export.py'],
        repos: ['acme/billing'],
        transcript_url: 'https://head.test/sessions/s-42',
        outputs: [
          {
            name: 'export-fix.md',
            content_type: 'text/markdown',
            data: Buffer.from('# Export fix\n\nRound each VAT line.'),
          },
        ],
        pages: [
          {
            url: 'https://docs.example/vat-rounding',
            title: 'VAT rounding rules',
            text: 'Round each line to the cent.',
            read_at: '2026-11-30T09:30:00Z',
          },
        ],
        memories: [{ action: 'remember', about: 'org:acme.example', text: 'Acme wants VAT rounded per line.' }],
        decisions: [
          {
            kind: 'approval',
            policy: 'ask-before-push',
            workflow: '',
            host: 'web1',
            detail: 'push the export fix',
            at: '2026-11-30T09:50:00Z',
          },
        ],
      },
    ];
    fake.turnEnded('s-42', ['client:acme']);
    await waitUntil(async () => fake.asked.some((a) => a.method === 'sessions.digest'), 'the digest to be pulled', {
      timeoutMs: 30_000,
    });
    await w.head.get(SessionKnowledge).settled();
    const session = await waitForCard(w, 'session:s-42', 4);
    const kinds = new Map<string, string>();
    for (const entry of session.timeline) {
      const item = await w.call(ItemsGet, { id: entry.item.id });
      kinds.set(item.kind, item.title);
    }
    assert.equal(kinds.get('session_digest'), 'Fix the Acme invoice export');
    assert.equal(kinds.get('web'), 'VAT rounding rules');
    assert.equal(kinds.get('document'), 'Export fix');
    assert.equal(kinds.get('note'), 'org:acme.example');
    const note = await w.call(ItemsGet, { id: memoryNoteId('org:acme.example', 'Acme wants VAT rounded per line.') });
    assert.equal(note.kind, 'note');
    // The links are written after the items: the card has them once the graph applied the last.
    let facts: string[] = [];
    const wanted = ['about label:client:acme', 'decided policy:ask-before-push', 'involved host:web1'];
    await waitUntil(
      async () => {
        facts = (await w.call(EntityGet, { key: 'session:s-42' })).facts.map(
          (f) => `${f.rel} ${'entity' in f.other ? f.other.entity.key : f.other.item.id}`,
        );
        return wanted.every((fact) => facts.includes(fact));
      },
      'the session’s links on its card',
      { timeoutMs: 30_000 },
    ).catch(() => assert.fail(`${wanted.join(', ')} not all in ${facts.join(', ')}`));
    // Pages link both ways: the session lists what it touched, a thing's card the sessions about it.
    const sessionCard = await w.call(EntityGet, { key: 'session:s-42' });
    assert.deepEqual(sessionCard.touched.map((t) => t.key).sort(), [
      'host:web1',
      'label:client:acme',
      'org:acme.example',
      'policy:ask-before-push',
    ]);
    const acme = await w.call(EntityGet, { key: 'org:acme.example' });
    assert.deepEqual(
      acme.sessions.map((s) => [s.session.key, s.produced.length]),
      [['session:s-42', 4]],
    );
    assert.deepEqual(acme.sessions[0]!.produced.map((i) => i.kind).sort(), [
      'document',
      'note',
      'session_digest',
      'web',
    ]);
    const outsider = (await fake
      .call('memex.entity.get', { key: 'org:acme.example' }, { labels: ['other'], session: 'x' })
      .catch(() => null)) as { sessions: unknown[] } | null;
    assert.ok(outsider === null || outsider.sessions.length === 0, 'another scope sees no session of client:acme');
    const label = await w.call(EntityGet, { key: 'label:client:acme' });
    assert.deepEqual(
      label.sessions.map((s) => s.session.key),
      ['session:s-42'],
    );

    const writers = new Set<string>();
    for await (const { event } of readLog(w.bus, { untilCaughtUp: true })) {
      if (['item.ingested', 'note.put', 'link.added'].includes(event.type)) writers.add(event.actor.id);
    }
    assert.deepEqual([...writers], ['head:s-42'], 'every write is attributed to the session');

    // forget undoes remember
    fake.digests = [
      {
        ...fake.digests[0]!,
        outputs: [],
        // A page the head recorded badly: rejected, and the memex says so in its health.
        pages: [{ url: 'not a url', title: 'broken', text: 'x', read_at: '2026-11-30T09:40:00Z' }],
        memories: [{ action: 'forget', about: 'org:acme.example', text: 'Acme wants VAT rounded per line.' }],
      },
    ];
    fake.turnEnded('s-42', ['client:acme']);
    await waitUntil(
      async () => fake.asked.filter((a) => a.method === 'sessions.digest').length === 2,
      'the second digest',
      { timeoutMs: 30_000 },
    );
    await w.head.get(SessionKnowledge).settled();
    assert.match(await healthProblems(w), /session s-42: item 1 rejected: .*not a URL/);
    const forgotten = memoryNoteId('org:acme.example', 'Acme wants VAT rounded per line.');
    await forgottenNote(w, forgotten);
  } finally {
    await w.stop();
    await fake.stop();
  }
});

test('the head’s memories table imports as notes on their things, attributed to their sessions; forgetting finds the same note', async () => {
  const w = await world({ ingest: true, graph: true });
  try {
    const rows = [
      { about: 'org:acme.example', text: 'Acme invoices in EUR.', session: 's-7', labels: ['client:acme'] },
      { about: 'coffee', text: 'The owner takes it black.' },
      { about: 'org:acme.example', text: 'Never kept.', forgotten: true },
      { about: 'org:acme.example', text: 'A label with a space.', labels: ['not a label'] },
    ];
    const imported = await w.call(HeadMemoriesImport, { memories: rows });
    const eur = memoryNoteId('org:acme.example', 'Acme invoices in EUR.');
    assert.deepEqual(imported.remembered, [
      { index: 0, note: eur },
      { index: 1, note: memoryNoteId('coffee', 'The owner takes it black.') },
    ]);
    assert.equal(imported.forgotten, 1);
    assert.deepEqual(
      imported.rejected.map((r) => r.index),
      [3],
    );
    assert.match(imported.rejected[0]!.reason, /^invalid_params: /);
    const note = await w.call(ItemsGet, { id: eur });
    assert.deepEqual([note.kind, note.title], ['note', 'org:acme.example']);
    const card = await waitForCard(w, 'org:acme.example', 1);
    assert.deepEqual(
      card.timeline.map((entry) => [entry.item.id, entry.rels]),
      [[eur, ['about']]],
      'the note is about Acme, on its card',
    );
    const writers = new Map<string, string>();
    for await (const { event } of readLog(w.bus, { untilCaughtUp: true })) {
      if (event.type === 'note.put') writers.set(event.subject, event.actor.id);
    }
    assert.equal(writers.get(`item:${eur}`), 'head:s-7', 'a session’s memory stays its write');

    // Importing again changes nothing; the table's later export with the memory forgotten deletes it.
    assert.deepEqual((await w.call(HeadMemoriesImport, { memories: [rows[0]!] })).remembered, [
      { index: 0, note: eur },
    ]);
    await w.call(HeadMemoriesImport, { memories: [{ ...rows[0]!, forgotten: true }] });
    await forgottenNote(w, eur);
  } finally {
    await w.stop();
  }
});

/** Waits until a forgotten memory's note is gone from the items. */
async function forgottenNote(w: World, id: string): Promise<void> {
  await waitUntil(
    () =>
      w.call(ItemsGet, { id }).then(
        () => false,
        (error: Error) => /no item/.test(error.message),
      ),
    'the forgotten memory to be gone',
    { timeoutMs: 30_000 },
  );
}

async function waitForCard(w: World, key: string, items: number): Promise<ResultOf<typeof EntityGet>> {
  let card: ResultOf<typeof EntityGet> | undefined;
  await waitUntil(
    async () => {
      card = await w.call(EntityGet, { key }).catch(() => undefined);
      return (card?.timeline.length ?? 0) >= items;
    },
    `${key} with ${items} items`,
    { timeoutMs: 30_000 },
  );
  return card!;
}
