import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { EntityGet, Ingest, Search, SignalsList } from '@memex/contracts';
import { buildOlm } from '@memex/exports/testing';
import { FakeHead } from '@memex/head/testing';
import { pdf } from '@memex/ingest/testing';
import { FakeChatServer, type FakeChatAnswer, type FakeChatRequest } from '@memex/pipelines';
import { sharedRoot, sharedSkip, waitUntil } from '@memex/testing';
import {
  NOT_RUN,
  SECTIONS_BY_TEST,
  SECTION_TIMEOUT_MS,
  examplesOf,
  printed,
  readmeExamples,
  readmeSession,
  runExamples,
} from './readme-run.js';
import { startStack, type TestStack } from './stack.js';

const HEAD_SECTION = 'Connecting the agent host (the head)';
/** This file's sections but the head's, which runs against a fake head in a test of its own. */
const SECTIONS = SECTIONS_BY_TEST['readme.test.ts'].filter((s) => s !== HEAD_SECTION);

/** The first page and references of an arXiv paper, written here (its words are this test's). */
const PAPER_PAGES = [
  [
    'arXiv:2103.15348v2 [cs.CV] 21 Jun 2021',
    'LayoutParser: A Unified Toolkit for Deep',
    'Learning Based Document Image Analysis',
    'Zejiang Shen1, Ruochen Zhang2, Melissa Dell3',
    '1 Allen Institute for AI',
    '2 Brown University',
    '3 Harvard University',
    'Abstract',
    'A toolkit for document layout analysis: detecting the regions of scanned pages, reading their',
    'text and exporting the structure, with models that can be shared and reused.',
    '1 Introduction',
    'Layout detection [1] is the first step of reading a scanned archive.',
  ],
  [
    'References',
    '[1] K. He, G. Gkioxari, P. Dollar, and R. Girshick, "Mask R-CNN," in Proc. ICCV, 2017, pp. 2961-2969.',
  ],
];

/** Files the examples name under `~`, generated (no third-party data), and a model read in place. */
async function makeHome(home: string): Promise<void> {
  const mail = (n: number, from: string, subject: string, body: string) =>
    `From: Ann Lee <${from}>\nTo: Me <me@example.com>\nSubject: ${subject}\nDate: Tue, 0${n} Mar 2021 10:00:00 +0000\nMessage-ID: <readme-${n}@example.com>\n\n${body}\n`;
  fs.mkdirSync(path.join(home, 'mail'), { recursive: true });
  fs.writeFileSync(
    path.join(home, 'mail/archive-2009.mbox'),
    [
      mail(1, 'ann@example.com', 'The renewal contract', 'The quarterly report on the renewal contract is attached.'),
      mail(2, 'ann@example.com', 'Car trouble', 'My automobile broke down on the way to the office.'),
      // Her old address, with the same full name: `memex review` suggests the merge README makes.
      mail(4, 'ann@old.example', 'New address', 'I write from my new address from now on.'),
    ]
      .map((m) => `From ann@example.com Tue Mar  2 10:00:00 2021\n${m}\n`)
      .join(''),
  );
  for (const dir of ['cur', 'new', 'tmp', '.Work/cur', '.Work/new', '.Work/tmp'])
    fs.mkdirSync(path.join(home, 'Maildir', dir), { recursive: true });
  fs.writeFileSync(
    path.join(home, 'Maildir/.Work/cur/1.readme:2,S'),
    mail(3, 'ann@example.com', 'Budget', 'The budget for March.'),
  );
  fs.mkdirSync(path.join(home, 'Documents/papers'), { recursive: true });
  // Three links to notes that do not exist: three dangling_link signals for "Patterns across your notes".
  fs.writeFileSync(
    path.join(home, 'Documents/papers/plan.md'),
    '# Renewal plan\n\nCall Acme about the contract. See [[Pricing 2026]], [[Acme contacts]] and [[Renewal checklist]].\n',
  );
  fs.writeFileSync(path.join(home, 'Documents/papers/notes.txt'), 'Notes on the quarterly report.\n');
  fs.writeFileSync(path.join(home, 'Documents/papers/layoutparser.pdf'), pdf(PAPER_PAGES));
  fs.mkdirSync(path.join(home, 'Calendars'));
  fs.writeFileSync(
    path.join(home, 'Calendars/team.ics'),
    [
      'BEGIN:VCALENDAR',
      'VERSION:2.0',
      'PRODID:-//memex readme test//EN',
      'BEGIN:VEVENT',
      'UID:readme-renewal-call@example.com',
      'DTSTAMP:20260301T000000Z',
      'DTSTART:20260331T090000Z',
      'DTEND:20260331T100000Z',
      'SUMMARY:Renewal call with Acme',
      'ORGANIZER:mailto:ann@example.com',
      'ATTENDEE;PARTSTAT=ACCEPTED:mailto:me@example.com',
      'END:VEVENT',
      'END:VCALENDAR',
      '',
    ].join('\r\n'),
  );
  fs.writeFileSync(
    path.join(home, 'Calendars/ann.vcf'),
    'BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ann Lee\r\nEMAIL:ann@example.com\r\nEND:VCARD\r\n',
  );
  // A real Outlook data file, read in place where the package that reads them installs it (its test data).
  const outlook = path.join(
    path.dirname(createRequire(import.meta.url).resolve('pst-extractor/package.json')),
    'example/testdata/pstextractortest@outlook.com.ost',
  );
  if (fs.existsSync(outlook)) {
    fs.mkdirSync(path.join(home, 'Documents/Outlook Files'));
    fs.symlinkSync(outlook, path.join(home, 'Documents/Outlook Files/archive.pst'));
  }
  await buildOlm(path.join(home, 'Documents/Archive.olm'));
  if (!sharedSkip('models/model2vec-test-fixture')) {
    fs.mkdirSync(path.join(home, 'models'));
    fs.symlinkSync(path.join(sharedRoot, 'models/model2vec-test-fixture'), path.join(home, 'models/potion-base-8M'));
  }
}

const GRANT_MAIL = `From: Ann Lee <ann@example.com>
To: Me <me@example.com>
Subject: The grant draft
Date: Mon, 04 Mar 2024 09:15:00 +0000
Message-ID: <readme-grant@example.com>

About the Memex grant: I'll send the draft by Friday.
`;

/** The chat model's answers (a fake OpenAI-compatible and Ollama server), as tests of tier 2 script them. */
function chatAnswer(request: FakeChatRequest): FakeChatAnswer {
  switch (request.task) {
    case 'summary':
      return { json: { summary: 'Ann will send the grant draft by Friday.' } };
    case 'topics':
      return { json: { topics: [{ name: 'Grant Application', quote: 'grant' }] } };
    case 'entities':
      return { json: { entities: [{ kind: 'project', name: 'Memex', key: '', quote: 'Memex' }] } };
    case 'commitments':
      return {
        json: {
          commitments: [
            {
              kind: 'promise',
              by: [{ address: 'ann@example.com', name: 'Ann Lee' }],
              to: [{ address: 'me@example.com', name: 'Me' }],
              what: 'send the grant draft',
              due: '2024-03-08',
              due_text: 'by Friday',
              quote: "I'll send the draft by Friday.",
            },
          ],
        },
      };
    case 'synthesis': {
      const cited = /\[item:([0-9A-Z]{26})\]/.exec(request.user)?.[1] ?? 'none';
      return { json: { sentences: [{ text: 'Ann promised the grant draft by Friday.', sources: [cited] }] } };
    }
  }
  return { json: {} };
}

describe("README's command examples run as written", () => {
  let stack: TestStack;
  let chat: FakeChatServer;
  let home: string;
  before(async () => {
    stack = await startStack(['ingest', 'pipelines', 'search', 'graph', 'calendar-sync', 'insights']);
    chat = new FakeChatServer(chatAnswer);
    await chat.start();
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-readme-'));
    await makeHome(home);
    fs.symlinkSync(stack.config.home, path.join(home, '.memex'));
  });
  after(async () => {
    await stack?.stop();
    await chat?.stop();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  test('every README section with examples is run by a test, or NOT_RUN says why not', () => {
    const covered = [...Object.values(SECTIONS_BY_TEST).flat(), ...Object.keys(NOT_RUN)];
    const sections = [...new Set(readmeExamples().map((e) => e.section))];
    assert.deepEqual(
      sections.filter((s) => !covered.includes(s)),
      [],
    );
    for (const [section, why] of Object.entries(NOT_RUN)) console.log(`README section not run: "${section}": ${why}`);
  });

  test('every command of the chosen sections succeeds', { timeout: SECTION_TIMEOUT_MS }, async () => {
    const examples = examplesOf(SECTIONS);
    assert.ok(examples.length >= 40, `${examples.length} examples found in ${SECTIONS.join(', ')}`);
    const session = readmeSession(home, stack);
    let searchReady = false;
    await runExamples(examples, session, {
      // No shared model (or Outlook file) on this machine: the reader's folder is not there either.
      skip: (command) =>
        (command.includes('~/models/') && !fs.existsSync(path.join(home, 'models'))) ||
        (command.includes('Outlook\\ Files') && !fs.existsSync(path.join(home, 'Documents/Outlook Files'))),
      prepare: (command) =>
        command
          .replaceAll('https://api.openai.com/v1', `${chat.url}/v1`)
          .replaceAll('http://localhost:11434', chat.url)
          .replace('sk-…', 'sk-readme-test')
          .replace('curl -N', 'curl -N --max-time 2'),
      before: async (command) => {
        if (/memex (search|similar)/.test(command) && !searchReady) {
          // What was imported is searchable once the pipelines have embedded it (in the background).
          await waitUntil(async () => (await stack.owner.call(Search, { q: 'renewal' })).hits.length >= 2, 'search');
          searchReady = true;
        }
        if (command.includes('memex review'))
          await waitUntil(
            async () =>
              (await stack.owner.call(EntityGet, { key: 'person:ann@old.example' }).catch(() => null)) !== null,
            "Ann's old address in the graph",
          );
        if (command.includes('memex entity paper:'))
          await waitUntil(
            async () =>
              (await stack.owner.call(EntityGet, { key: 'paper:arxiv:2103.15348' }).catch(() => null)) !== null,
            'the paper in the graph',
          );
        if (command.startsWith('npx memex jobs')) {
          // Mail that arrives once the model is registered: its topic is what `memex summarize` asks about.
          await stack.owner.call(Ingest, {
            items: [
              {
                type: 'message/rfc822',
                data: Buffer.from(GRANT_MAIL).toString('base64'),
                source: { kind: 'mbox', id: 'readme' },
                external_id: 'grant',
              },
            ],
          });
        }
        if (command.includes('memex summarize topic:grant-application'))
          await waitUntil(
            async () =>
              (await stack.owner.call(EntityGet, { key: 'topic:grant-application' }).catch(() => null)) !== null,
            'the topic the chat model read',
          );
        if (command.startsWith('npx memex signals'))
          await waitUntil(
            async () => (await stack.owner.call(SignalsList, {})).signals.length >= 3,
            'three signals from the notes',
          );
      },
      check: (command, result) =>
        command.startsWith('curl -N')
          ? // A stream is cut after two seconds by --max-time (curl's exit 28); it must have sent events.
            result.status === 28 && /^data: /m.test(result.stdout)
          : result.status === 0 && !/"error"\s*:/.test(result.stdout),
    });
    const ran = session.outputs.map((o) => o.command);
    assert.ok(ran.some((c) => c.includes('memex.items.get')) && ran.some((c) => c.includes('import mbox')));
    assert.match(printed(session, /memex entity paper:arxiv/), /LayoutParser/);
    assert.match(printed(session, /memex trail show/), /1\. .*person:me@example.com/);
    assert.ok(chat.count('topics') >= 1, 'the registered chat model was asked');
  });

  test("a body sent as curl -d's form is refused, naming the Content-Type to send", async () => {
    const reply = await fetch(`${stack.url}/api/v1/memex/rpc`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.ownerToken}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: '{"method":"memex.types","params":{}}',
    });
    assert.equal(reply.status, 400);
    const { error } = (await reply.json()) as { error: { message: string } };
    assert.match(error.message, /Content-Type: application\/json/);
    assert.match(error.message, /application\/x-www-form-urlencoded/);
  });
});

describe("README's head section runs as written, against a fake head", () => {
  test('enroll (CA pinned), status, the memories table imported, triggers, unenroll', async () => {
    const fake = new FakeHead();
    await fake.start();
    const stack = await startStack(['ingest', 'graph', 'head']);
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-readme-head-'));
    try {
      fs.writeFileSync(
        path.join(home, 'head-memories.json'),
        JSON.stringify([{ about: 'org:acme.example', text: 'Acme invoices in EUR.', session: 's-1' }]),
      );
      const examples = examplesOf([HEAD_SECTION]);
      assert.ok(examples.length >= 5, `${examples.length} examples in ${HEAD_SECTION}`);
      const session = readmeSession(home, stack);
      await runExamples(examples, session, {
        prepare: (command) =>
          command
            .replace('https://head.example:8443', fake.enrollUrl)
            .replace(' TOKEN ', ` ${fake.newToken()} `)
            .replace('3f2a…', new X509Certificate(fake.ca.pem).fingerprint256),
      });
      const said = session.outputs.map((o) => o.result.stdout).join('\n');
      assert.match(said, /enrolled as .*OU=memex/);
      assert.match(said, /1 memories kept as notes/);
      assert.match(said, /unenrolled/);
      assert.ok(fake.links.length >= 1, 'the memex dialled the head');
    } finally {
      await stack.stop();
      await fake.stop();
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});
