import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { seededRandom } from '@memex/testing';
import { pdf } from '../domain/handlers/testing/build.js';

/**
 * Deterministic mail archives for tests and benchmarks: messages with realistic sizes (a few KB
 * of text, some long ones, some with a PDF or a photo attached), threads by References, several
 * years of dates. The same seed gives the same bytes.
 */

const WORDS = (
  'the of and to in is that for it as was with be by on not he this are or his from at which but have an they you were her she ' +
  'there been one all we their has would when if so no will more can about out up them into do time some only could new what other ' +
  'budget meeting project report draft review plan team schedule quarter client contract invoice design release server deploy ' +
  'question answer thanks please attached document version update issue deadline office travel dinner weekend family photo paper ' +
  'results analysis data model figure table section chapter conference talk slides agenda notes minutes decision proposal offer ' +
  'price order delivery account password security backup storage network laptop phone camera garden house kitchen school holiday'
).split(' ');
const NAMES = [
  'ann',
  'bob',
  'carol',
  'dave',
  'erin',
  'frank',
  'grace',
  'heidi',
  'ivan',
  'judy',
  'mallory',
  'oscar',
  'peggy',
  'trent',
  'victor',
  'walter',
];
const DOMAINS = ['example.com', 'example.org', 'example.net', 'mail.example.com', 'lists.example.org'];

export interface GeneratedMessage {
  bytes: Buffer;
  messageId: string;
  date: Date;
  attachments: number;
}

export interface ArchiveOptions {
  messages: number;
  seed?: number;
}

function sentence(rand: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(WORDS[Math.floor(rand() * WORDS.length)]!);
  const text = out.join(' ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

function paragraphs(rand: () => number, bytes: number): string {
  const out: string[] = [];
  let size = 0;
  while (size < bytes) {
    const paragraph = Array.from({ length: 2 + Math.floor(rand() * 5) }, () =>
      sentence(rand, 5 + Math.floor(rand() * 15)),
    ).join(' ');
    // Wrapped at 72 like a mail client would, with a "From " line now and then for mbox escaping.
    const wrapped = paragraph.replace(/(.{1,72})(\s+|$)/g, '$1\n').trimEnd();
    out.push(rand() < 0.01 ? `From what I remember,\n${wrapped}` : wrapped);
    size += wrapped.length + 2;
  }
  return out.join('\n\n');
}

/** Incompressible bytes standing in for a photo. */
function noise(rand: () => number, length: number): Buffer {
  const bytes = Buffer.alloc(length + 3);
  for (let i = 0; i < length; i += 4) bytes.writeUInt32LE(Math.floor(rand() * 4294967296), i);
  return bytes.subarray(0, length);
}

function base64Lines(bytes: Buffer): string {
  return bytes.toString('base64').replace(/(.{76})/g, '$1\n');
}

function address(rand: () => number): { name: string; email: string } {
  const name = NAMES[Math.floor(rand() * NAMES.length)]!;
  return {
    name: `${name.charAt(0).toUpperCase()}${name.slice(1)} ${String.fromCharCode(65 + Math.floor(rand() * 26))}.`,
    email: `${name}@${DOMAINS[Math.floor(rand() * DOMAINS.length)]}`,
  };
}

/**
 * The messages of an archive, one at a time (about 4.5 KB on average). Text bodies of 0.4–4 KB,
 * one in twenty 10–25 KB; one in a hundred carries a photo (40–120 KB of incompressible bytes),
 * one in a hundred a small PDF. About a third reply to an earlier message (In-Reply-To, References).
 */
export function* generateMessages({ messages, seed = 1 }: ArchiveOptions): Generator<GeneratedMessage> {
  const rand = seededRandom(seed);
  const start = Date.UTC(2004, 0, 1);
  const span = 20 * 365 * 24 * 3600 * 1000;
  const recent: Array<{ id: string; subject: string; refs: string[] }> = [];
  for (let i = 0; i < messages; i++) {
    const date = new Date(start + Math.floor((span * i) / messages) + Math.floor(rand() * 3_600_000));
    const from = address(rand);
    const to = address(rand);
    const messageId = `${i.toString(36)}.${Math.floor(rand() * 1e9).toString(36)}@${from.email.split('@')[1]}`;
    const parent = recent.length > 0 && rand() < 0.35 ? recent[Math.floor(rand() * recent.length)]! : null;
    const subject = parent
      ? `Re: ${parent.subject.replace(/^Re: /, '')}`
      : sentence(rand, 3 + Math.floor(rand() * 6)).slice(0, -1);
    const refs = parent ? [...parent.refs, parent.id].slice(-10) : [];
    recent.push({ id: messageId, subject, refs });
    if (recent.length > 200) recent.shift();
    const long = rand() < 0.05;
    const text = paragraphs(rand, long ? 10_000 + rand() * 15_000 : 400 + rand() * 3_600);
    const headers = [
      `Return-Path: <${from.email}>`,
      `Received: from mx${Math.floor(rand() * 9)}.${from.email.split('@')[1]} by mail.example.com with ESMTP id ${Math.floor(rand() * 1e12).toString(36)}; ${date.toUTCString()}`,
      `From: ${from.name} <${from.email}>`,
      `To: ${to.name} <${to.email}>`,
      `Subject: ${subject}`,
      `Date: ${date.toUTCString().replace('GMT', '+0000')}`,
      `Message-ID: <${messageId}>`,
      ...(parent ? [`In-Reply-To: <${parent.id}>`, `References: ${refs.map((r) => `<${r}>`).join(' ')}`] : []),
      'MIME-Version: 1.0',
    ];
    const attachment = rand();
    let body: string;
    let attachments = 0;
    if (attachment < 0.02) {
      attachments = 1;
      const photo = attachment < 0.01;
      const bytes = photo
        ? noise(rand, 40_000 + Math.floor(rand() * 80_000))
        : pdf([[sentence(rand, 12), sentence(rand, 10)], [sentence(rand, 14)]], { Title: subject });
      const [type, name] = photo ? ['image/jpeg', `IMG_${1000 + i}.jpg`] : ['application/pdf', `report-${i}.pdf`];
      headers.push(`Content-Type: multipart/mixed; boundary="b${i}"`);
      body = [
        `--b${i}`,
        'Content-Type: text/plain; charset=utf-8',
        '',
        text,
        `--b${i}`,
        `Content-Type: ${type}; name="${name}"`,
        `Content-Disposition: attachment; filename="${name}"`,
        'Content-Transfer-Encoding: base64',
        '',
        base64Lines(bytes),
        `--b${i}--`,
        '',
      ].join('\n');
    } else {
      headers.push('Content-Type: text/plain; charset=utf-8');
      body = `${text}\n`;
    }
    yield { bytes: Buffer.from(`${headers.join('\n')}\n\n${body}`, 'utf8'), messageId, date, attachments };
  }
}

/** mboxrd: `From ` lines (and already-quoted ones) in the message get one more `>`. */
function mboxrdEscape(bytes: Buffer): Buffer {
  return Buffer.from(bytes.toString('latin1').replace(/^(>*From )/gm, '>$1'), 'latin1');
}

/** Writes messages as an mbox; returns its size in bytes. */
export async function writeMbox(file: string, messages: Iterable<GeneratedMessage>): Promise<number> {
  const out = fs.createWriteStream(file);
  let size = 0;
  for (const message of messages) {
    const chunk = Buffer.concat([
      Buffer.from(
        `From ${message.messageId.split('@')[0]}@example.com ${message.date.toUTCString().replace(/^(\w+), (\d+) (\w+) (\d+) ([\d:]+) GMT$/, '$1 $3 $2 $5 $4')}\n`,
      ),
      mboxrdEscape(message.bytes),
      Buffer.from('\n'),
    ]);
    size += chunk.length;
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return size;
}

/** Writes messages as one Maildir (all in cur/, seen). */
export function writeMaildir(dir: string, messages: Iterable<GeneratedMessage>): number {
  for (const sub of ['cur', 'new', 'tmp']) fs.mkdirSync(path.join(dir, sub), { recursive: true });
  let count = 0;
  for (const message of messages) {
    fs.writeFileSync(
      path.join(dir, 'cur', `${Math.floor(message.date.getTime() / 1000)}.M${count}P1.bench:2,S`),
      message.bytes,
    );
    count++;
  }
  return count;
}

/**
 * A message of a generated series for threading tests: Message-ID `<id>@gen`, naming
 * `references` (ids without `@gen`) in References; a reply's Subject starts with Re:.
 */
export function seriesMail(id: string, references: string[] = []): Buffer {
  const headers = [
    'From: Dev <dev@example.org>',
    'To: list@example.org',
    `Subject: ${references.length > 0 ? 'Re: ' : ''}series`,
    'Date: Tue, 1 Mar 2011 10:00:00 +0000',
    `Message-ID: <${id}@gen>`,
    ...(references.length > 0 ? [`References: ${references.map((r) => `<${r}@gen>`).join(' ')}`] : []),
  ];
  return Buffer.from(`${headers.join('\r\n')}\r\n\r\nbody of ${id}\r\n`);
}
