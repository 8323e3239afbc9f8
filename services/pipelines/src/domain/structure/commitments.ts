import { createHash } from 'node:crypto';
import type { Commitment } from '@memex/contracts';
import { datesIn } from './mentions.js';
import { signatureStart, type Line } from './signature.js';

/** The rules' version: bump it when they change, so a re-run's output is told apart. */
export const COMMITMENT_RULES = 'commitments@1';

export interface Party {
  address: string;
  name?: string;
}

/** Who a message is from and to, and when it was sent: what its commitments are resolved against. */
export interface MessageContext {
  itemId: string;
  sent: Date;
  from: Party;
  to: Party[];
}

/** Verbs that state how things are, not something someone will do ("I'll be out", "I'll need"). */
const NOT_ACTIONS =
  'be|have|need|want|like|love|see|assume|guess|think|hope|wonder|bet|admit|say|tell you what|miss|probably|never|not|likely|know';
/** `I'll send…`, `we will review…`, `I'm going to…`, `let me…`, and `Will get back…` with no subject. */
const PROMISE = new RegExp(
  String.raw`(?:^|[\s(])(?:(?:I|we)(?:['’]ll| will| shall| am going to|['’]m going to| are going to|['’]re going to)|let me|(?<=^)(?:will|shall))\s+(?:(?:definitely|certainly|surely|gladly|also|then|just|first)\s+)*(?!(?:${NOT_ACTIONS}|you|they|he|she|it|there|this|that|we|i)\b)(?<what>[a-z][a-z'’-]*\b.*)`,
  'iu',
);
/** `can you review…?`, `could you please send…`, `would you mind checking…`, `please send… by Friday`. */
const REQUEST = new RegExp(
  String.raw`(?:^|[\s,(])(?:(?:can|could|would|will) you(?: please)?(?: also)?(?: mind)?|please)\s+(?!(?:${NOT_ACTIONS}|believe|imagine|let me know if|let us know if|find attached|see attached|note|ignore|join|come|attend)\b)(?<what>[a-z][a-z'’-]*\b.*)`,
  'iu',
);
/** Periods a deadline names, resolved to their last working day. */
const PERIOD =
  /\b(?:by |before |until |in the course of )?(?:the )?(?:end of (?:the )?(this|next) (week|month)|(this|next) (week|month)|end of (?:the )?(week|month)|(?:the )?(?:eod|end of (?:the )?day|cob|close of business))\b/i;
/** A date is a deadline after these words, or when it is one of these words itself. */
const DEADLINE_LEAD = /(?:by|before|until|till|no later than|on|within|in|after)\s+(?:the\s+)?$/i;
const DEADLINE_ITSELF =
  /^(?:next|this|tomorrow|today|tonight|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b/i;

/**
 * Commitments in a mail's own text (quoted mail and the signature left out), by rules: the sender
 * promising ("I'll send the draft by Friday", "Will get back to you next week") and the sender
 * asking ("can you review it by 3 March?"). Each with who, to whom, what, and the due date
 * resolved against when the message was sent. English only; a conditional or hedged promise
 * ("I'll try to…") counts, a negated or stative one ("I won't", "I'll be out") does not.
 */
export function commitmentsIn(text: string, message: MessageContext): Commitment[] {
  const lines = unquotedLines(text);
  const body = lines.slice(0, signatureStart(lines) ?? lines.length);
  const out: Commitment[] = [];
  for (const sentence of sentencesOf(body)) {
    const promise = PROMISE.exec(sentence.text);
    const request = promise ? null : REQUEST.exec(sentence.text);
    const found = promise ?? request;
    if (!found?.groups) continue;
    const kind = promise ? 'promise' : 'request';
    // The deadline is the promised act's: after its verb ("if you don't hear by Friday, I'll…" is not due Friday).
    const due = dueOf(found.groups['what']!, message.sent);
    // A polite imperative without a deadline is not yet a commitment; a question asking for one is.
    if (kind === 'request' && !due && !/\?\s*$/.test(sentence.text)) continue;
    const what = whatOf(found.groups['what']!, due?.text ?? null);
    if (!what) continue;
    const by = kind === 'promise' ? [message.from] : message.to;
    const to = kind === 'promise' ? message.to : [message.from];
    out.push({
      key: keyOf(message.itemId, kind, by, what),
      kind,
      by,
      to,
      what,
      due: due?.value ?? null,
      due_text: due?.text ?? null,
      quote: sentence.text.replace(/\s+/g, ' ').slice(0, 1000),
      start: sentence.start,
      end: sentence.start + sentence.text.length,
      confidence: (kind === 'promise' ? 0.6 : 0.5) + (due ? 0.2 : 0),
    });
  }
  return out;
}

/**
 * The writer's own lines: quoted lines (`>`) are skipped, not an end (replies answer between
 * them); a forwarded or Outlook-quoted original ends the text.
 */
function unquotedLines(text: string): Line[] {
  const out: Line[] = [];
  let offset = 0;
  for (const raw of text.split('\n')) {
    const start = offset + (raw.length - raw.trimStart().length);
    offset += raw.length + 1;
    const line = raw.trim();
    if (/^-----\s?(?:Original|Forwarded) Message\s?-----/i.test(line)) break;
    if (line.startsWith('>') || /^On .{4,200} wrote:$/.test(line)) continue;
    out.push({ text: line, start });
  }
  return out;
}

/** Sentences of the body with their offsets: lines joined within a paragraph, cut at . ! ? */
function sentencesOf(lines: Line[]): Line[] {
  const out: Line[] = [];
  let current: Line | undefined;
  let end = 0;
  const flush = () => {
    if (current && current.text.trim() !== '') out.push({ text: current.text.trim(), start: current.start });
    current = undefined;
  };
  for (const line of lines) {
    if (line.text === '') {
      flush();
      continue;
    }
    // Keep offsets exact: a joined line is separated by what lay between it and the last one.
    if (current) current.text += ' '.repeat(Math.max(1, line.start - end));
    else current = { text: '', start: line.start };
    let rest = line.text;
    let at = line.start;
    for (;;) {
      const cut = sentenceEnd(rest);
      if (!cut) break;
      const upto = cut.index + 1;
      current!.text += rest.slice(0, upto);
      flush();
      const next = rest.slice(upto);
      const lead = next.length - next.trimStart().length;
      at += upto + lead;
      rest = next.trimStart();
      current = { text: '', start: at };
    }
    current!.text += rest;
    end = line.start + line.text.length;
    // A line ending a sentence ends it; one that does not runs on into the next line.
    if (/[.!?]$/.test(rest)) flush();
  }
  flush();
  return out;
}

/** Where a sentence ends in a line: . ! ? before more text, not after an abbreviation or an initial. */
function sentenceEnd(line: string): { index: number } | undefined {
  for (const m of line.matchAll(/[.!?](?=\s+\S)/g)) {
    if (m[0] === '.' && ABBREVIATION.test(line.slice(0, m.index + 1))) continue;
    return { index: m.index };
  }
  return undefined;
}

const ABBREVIATION =
  /(?:^|[\s(])(?:\p{Lu}|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|mr|mrs|ms|dr|prof|e\.g|i\.e|etc|approx|vs|no|st)\.$/iu;

interface Due {
  text: string;
  value: string;
}

/** The deadline a sentence gives, as a day (or a day and time), resolved against the send date. */
function dueOf(sentence: string, sent: Date): Due | undefined {
  const period = PERIOD.exec(sentence);
  if (period) {
    const which = (period[1] ?? period[3] ?? 'this').toLowerCase();
    const unit = (period[2] ?? period[4] ?? period[5])?.toLowerCase();
    return { text: period[0].trim(), value: isoDay(unit ? endOf(unit as 'week' | 'month', which, sent) : sent) };
  }
  // A stretch of time ("for the next couple of months") is not a deadline.
  const date = datesIn(sentence, sent, { forward: true, englishOnly: true }).find(
    (d) =>
      !/\b(?:couple|few|several)\b/i.test(d.text) &&
      (DEADLINE_LEAD.test(sentence.slice(0, d.start)) || DEADLINE_ITSELF.test(d.text)),
  );
  if (!date) return undefined;
  const lead = DEADLINE_LEAD.exec(sentence.slice(0, date.start))?.[0] ?? '';
  return { text: sentence.slice(date.start - lead.length, date.end).replace(/[\s,;.]+$/, ''), value: date.value };
}

/** The last working day (Friday) of this or next week, or the last day of this or next month. */
function endOf(unit: 'week' | 'month', which: string, sent: Date): Date {
  const day = new Date(Date.UTC(sent.getUTCFullYear(), sent.getUTCMonth(), sent.getUTCDate()));
  if (unit === 'month')
    return new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth() + (which === 'next' ? 2 : 1), 0));
  const toFriday = (5 - day.getUTCDay() + 7) % 7;
  day.setUTCDate(day.getUTCDate() + toFriday + (which === 'next' ? 7 : 0));
  return day;
}

function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** What is promised: the verb phrase, without the deadline's words and the sentence's end. */
function whatOf(phrase: string, dueText: string | null): string | undefined {
  let what = dueText ? phrase.replace(dueText, ' ') : phrase;
  what = what
    .replace(/\b(?:as soon as possible|asap|please|if possible|if you can)\b/gi, ' ')
    .replace(/[\s,;:.!?)]+$/, '')
    .replace(/\s+/g, ' ')
    .trim();
  // Up to the next clause ("…, and then we can talk") when it is long.
  const clause =
    /^(.{8,}?)(?:,? (?:and then|but|so that|because|which|as soon as)\b|, (?:and|so|then)\b| [-–—] |; )/i.exec(what);
  if (clause) what = clause[1]!.trim();
  return what.length >= 3 ? what.slice(0, 500) : undefined;
}

/** Stable over re-runs and rule versions: the item, the kind, who, and what (normalized). */
function keyOf(itemId: string, kind: string, by: Party[], what: string): string {
  const who = by
    .map((p) => p.address)
    .sort()
    .join(',');
  const hash = createHash('sha256').update(`${itemId}\0${kind}\0${who}\0${what.toLowerCase()}`).digest('hex');
  return `${kind}:${hash.slice(0, 16)}`;
}
