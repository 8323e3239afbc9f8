import { createHash } from 'node:crypto';
import type { Commitment } from '@memex/contracts';
import { datesIn } from './mentions.js';
import { ownLines, signatureStart, type Line } from './signature.js';

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
  'be|have|need|want|like|love|see|assume|guess|think|hope|wonder|bet|admit|say|tell you what|miss|probably|never|not|likely';
/** `I'll send…`, `we will review…`, `I'm going to…`, `let me…`, and `Will get back…` with no subject. */
const PROMISE = new RegExp(
  String.raw`(?:^|[\s(])(?:(?:I|we)(?:['’]ll| will| shall| am going to|['’]m going to| are going to|['’]re going to)|let me|(?<=^)(?:will|shall))\s+(?:(?:try to|make sure to|be sure to|definitely|also|then|just|first)\s+)*(?!(?:${NOT_ACTIONS}|you|they|he|she|it|there|this|that|we|i)\b)(?<what>[a-z][a-z'’-]*\b.*)`,
  'iu',
);
/** `can you review…?`, `could you please send…`, `would you mind checking…`, `please send… by Friday`. */
const REQUEST = new RegExp(
  String.raw`(?:^|[\s,(])(?:(?:can|could|would) you(?: please)?(?: mind)?|please)\s+(?!(?:${NOT_ACTIONS}|believe|imagine|let me know if|let us know if|find attached|see attached|note|ignore)\b)(?<what>[a-z][a-z'’-]*\b.*)`,
  'iu',
);
/** Periods a deadline names, resolved to their last working day. */
const PERIOD =
  /\b(?:by |before |until |in the course of )?(?:the )?(?:end of (?:the )?(this|next) (week|month)|(this|next) (week|month)|end of (?:the )?(week|month)|(?:the )?(?:eod|end of (?:the )?day|cob|close of business))\b/i;
/** Words that make a date a deadline rather than a fact ("by", "before", "no later than"…). */
const DEADLINE_WORDS = /\b(?:by|before|until|till|no later than|on|next|this|tomorrow|today|tonight|within|in)\b/i;

/**
 * Commitments in a mail's own text (quoted mail and the signature left out), by rules: the sender
 * promising ("I'll send the draft by Friday", "Will get back to you next week") and the sender
 * asking ("can you review it by 3 March?"). Each with who, to whom, what, and the due date
 * resolved against when the message was sent. English only; a conditional or hedged promise
 * ("I'll try to…") counts, a negated or stative one ("I won't", "I'll be out") does not.
 */
export function commitmentsIn(text: string, message: MessageContext): Commitment[] {
  const lines = ownLines(text);
  const body = lines.slice(0, signatureStart(lines) ?? lines.length);
  const out: Commitment[] = [];
  for (const sentence of sentencesOf(body)) {
    const promise = PROMISE.exec(sentence.text);
    const request = promise ? null : REQUEST.exec(sentence.text);
    const found = promise ?? request;
    if (!found?.groups) continue;
    const kind = promise ? 'promise' : 'request';
    const due = dueOf(sentence.text, message.sent);
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
      const cut = /[.!?](?=\s+\S)/.exec(rest);
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
  const date = datesIn(sentence, sent, true).find((d) =>
    DEADLINE_WORDS.test(sentence.slice(Math.max(0, d.start - 16), d.end)),
  );
  if (!date) return undefined;
  const lead =
    /(?:by|before|until|till|no later than|on|within|in)\s+$/i.exec(sentence.slice(0, date.start))?.[0] ?? '';
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
