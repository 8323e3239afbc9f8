import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Search } from '@memex/contracts';
import { FakeHead } from '@memex/head/testing';
import { sharedRoot, sharedSkip } from '@memex/testing';
import { startStack, type TestStack } from './stack.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = path.join(ROOT, 'cli/bin/memex.js');

/** The README sections whose `sh` examples run here, against a test stack, as a reader would type them. */
const SECTIONS = [
  'Two commands',
  'Using it',
  'Tokens for agents',
  'Bringing your archives in',
  'Finding things',
  'Calendar and contacts',
  'Rebuilding a read model',
];

/** Sections run by a test of their own below (against a fake head). */
const OWN_TEST = ['Connecting the agent host (the head)'];

/**
 * Sections with examples that do not run here, each with why: every section with `sh` examples is
 * in SECTIONS, OWN_TEST or here (checked), so a new one cannot go untested without saying so.
 */
const NOT_RUN: Record<string, string> = {
  'Importing a Google Takeout':
    'needs a Google Takeout export under ~/Downloads, which this test does not generate yet',
  'Photos and videos': 'needs photo exports with sidecars and the media service; not generated here yet',
  'Watched folders and sources': 'needs watched folders and the sources service, which is being built',
  'Folders on another machine (memex worker)': 'needs a second machine running memex worker',
  'The graph':
    "names a second address of Ann's (ann@old.example) and a trail's id (<trail>) the reader supplies; not generated here yet",
  'Papers and citations':
    "needs an arXiv paper's PDF in the memex (none is generated here); services/graph's papers.test.ts ingests real and generated PDFs and reads the same cards and searches",
  'Summaries, topics and commitments (a chat model)': 'needs a chat model endpoint (no fake of one in this test yet)',
  'Connecting Gmail':
    "needs Google's consent in a browser (mail-sync's tests use a fake Google, not through these commands)",
  'Connecting an IMAP account':
    'needs an IMAP account (mail-sync tests run their own server, not through these commands)',
  'Patterns across your notes':
    'mints signal number 3, which needs notes that make three signals; not generated here yet',
  Development: 'builds and runs the whole suite, of which this test is part',
};

/** Commands a reader runs that this test does not (the suite is itself what they start). */
const NOT_HERE: Array<[RegExp, string]> = [[/^npm /, 'starts or tests the whole system']];

/** Runs a shell command without blocking this process (the stack it talks to runs here). */
function sh(
  command: string,
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], { ...options, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

interface Example {
  section: string;
  command: string;
}

/** The `sh` blocks of the README, one command per entry (`\\` continuations joined), with their sections. */
function readmeExamples(markdown: string): Example[] {
  const out: Example[] = [];
  let section = '';
  let inBlock = false;
  let pending = '';
  for (const line of markdown.split('\n')) {
    const heading = /^#{2,3} (.+)$/.exec(line);
    if (heading && !inBlock) section = heading[1]!.trim();
    else if (line.startsWith('```')) inBlock = !inBlock && line.trim() === '```sh';
    else if (inBlock) {
      pending += line.endsWith('\\') ? `${line.slice(0, -1)} ` : line;
      if (line.endsWith('\\')) continue;
      const command = pending.trim();
      pending = '';
      if (command && !command.startsWith('#')) out.push({ section, command });
    }
  }
  return out;
}

/** Files the examples name under `~`, generated (no third-party data), and a model read in place. */
function makeHome(home: string): void {
  const mail = (n: number, subject: string, body: string) =>
    `From: Ann Lee <ann@example.com>\nTo: Me <me@example.com>\nSubject: ${subject}\nDate: Tue, 0${n} Mar 2021 10:00:00 +0000\nMessage-ID: <readme-${n}@example.com>\n\n${body}\n`;
  fs.mkdirSync(path.join(home, 'mail'), { recursive: true });
  fs.writeFileSync(
    path.join(home, 'mail/archive-2009.mbox'),
    [
      mail(1, 'The renewal contract', 'The quarterly report on the renewal contract is attached.'),
      mail(2, 'Car trouble', 'My automobile broke down on the way to the office.'),
    ]
      .map((m) => `From ann@example.com Tue Mar  2 10:00:00 2021\n${m}\n`)
      .join(''),
  );
  for (const dir of ['cur', 'new', 'tmp', '.Work/cur', '.Work/new', '.Work/tmp'])
    fs.mkdirSync(path.join(home, 'Maildir', dir), { recursive: true });
  fs.writeFileSync(path.join(home, 'Maildir/.Work/cur/1.readme:2,S'), mail(3, 'Budget', 'The budget for March.'));
  fs.mkdirSync(path.join(home, 'Documents/papers'), { recursive: true });
  fs.writeFileSync(path.join(home, 'Documents/papers/plan.md'), '# Renewal plan\n\nCall Acme about the contract.\n');
  fs.writeFileSync(path.join(home, 'Documents/papers/notes.txt'), 'Notes on the quarterly report.\n');
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
  if (!sharedSkip('models/model2vec-test-fixture')) {
    fs.mkdirSync(path.join(home, 'models'));
    fs.symlinkSync(path.join(sharedRoot, 'models/model2vec-test-fixture'), path.join(home, 'models/potion-base-8M'));
  }
}

describe("README's command examples run as written", () => {
  let stack: TestStack;
  let home: string;
  before(async () => {
    stack = await startStack(['ingest', 'pipelines', 'search', 'graph', 'calendar-sync']);
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-readme-'));
    makeHome(home);
    fs.symlinkSync(stack.config.home, path.join(home, '.memex'));
  });
  after(async () => {
    await stack?.stop();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  test('every command of the chosen sections succeeds', async () => {
    const all = readmeExamples(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
    const untested = [...new Set(all.map((e) => e.section))].filter(
      (s) => !SECTIONS.includes(s) && !OWN_TEST.includes(s) && !(s in NOT_RUN),
    );
    assert.deepEqual(untested, [], 'a README section with examples is run here, or NOT_RUN says why not');
    for (const [section, why] of Object.entries(NOT_RUN))
      console.log(`README section not run here: "${section}": ${why}`);
    const examples = all.filter((e) => SECTIONS.includes(e.section));
    assert.ok(examples.length >= 15, `${examples.length} examples found in ${SECTIONS.join(', ')}`);
    assert.deepEqual(
      SECTIONS.filter((s) => !examples.some((e) => e.section === s)),
      [],
      'every chosen section still has examples',
    );
    const port = new URL(stack.url).port;
    const vars: Record<string, string> = {};
    let lastId = '';
    let lastSeq = '0';
    let searchReady = false;
    const ran: string[] = [];
    for (const { section, command } of examples) {
      if (NOT_HERE.some(([pattern]) => pattern.test(command))) continue;
      if (command.includes('~/models/') && !fs.existsSync(path.join(home, 'models'))) continue; // no shared model here
      if (/memex (search|similar)/.test(command) && !searchReady) {
        // What was imported is searchable once the pipelines have embedded it (in the background).
        for (let i = 0; i < 240 && (await stack.owner.call(Search, { q: 'renewal' })).hits.length < 2; i++)
          await sleep(250);
        searchReady = true;
      }
      const streaming = command.startsWith('curl -N');
      const run = command
        .replaceAll('localhost:7777', `127.0.0.1:${port}`)
        .replaceAll('npx memex', `${JSON.stringify(process.execPath)} ${CLI}`)
        .replaceAll('01J…', lastId)
        .replace('"min_seq":42', `"min_seq":${lastSeq}`)
        .replace('curl -N', 'curl -N --max-time 2');
      const assignment = /^(\w+)=(\$\(.*\))$/.exec(run);
      const result = await sh(assignment ? `printf %s "${assignment[2]}"` : run, {
        cwd: home,
        env: { ...process.env, ...vars, HOME: home, MEMEX_URL: stack.url, MEMEX_HOME: stack.config.home },
      });
      const where = `${section}: ${command}\nexit ${result.status}\n${result.stdout}\n${result.stderr}`;
      // A stream is cut after two seconds by --max-time (curl's exit 28); it must have sent events.
      if (streaming) assert.ok(result.status === 28 && /^data: /m.test(result.stdout), where);
      else assert.equal(result.status, 0, where);
      assert.doesNotMatch(result.stdout, /"error"\s*:/, where);
      if (assignment) vars[assignment[1]!] = result.stdout;
      lastId = [...result.stdout.matchAll(/\b0[0-9A-HJKMNP-TV-Z]{25}\b/g)].at(-1)?.[0] ?? lastId;
      lastSeq = /"seq":(\d+)/.exec(result.stdout)?.[1] ?? lastSeq;
      ran.push(command);
    }
    assert.ok(ran.some((c) => c.includes('memex.items.get')) && ran.some((c) => c.includes('import mbox')));
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
      const section = OWN_TEST[0]!;
      const examples = readmeExamples(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')).filter(
        (e) => e.section === section,
      );
      assert.ok(examples.length >= 5, `${examples.length} examples in ${section}`);
      const outputs: string[] = [];
      for (const { command } of examples) {
        const run = command
          .replace('https://head.example:8443', fake.enrollUrl)
          .replace(' TOKEN ', ` ${fake.newToken()} `)
          .replace('3f2a…', new X509Certificate(fake.ca.pem).fingerprint256)
          .replaceAll('npx memex', `${JSON.stringify(process.execPath)} ${CLI}`);
        const result = await sh(run, {
          cwd: home,
          env: { ...process.env, HOME: home, MEMEX_URL: stack.url, MEMEX_HOME: stack.config.home },
        });
        assert.equal(result.status, 0, `${command}\nexit ${result.status}\n${result.stdout}\n${result.stderr}`);
        outputs.push(result.stdout);
      }
      const said = outputs.join('\n');
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
