import type { Static } from '@sinclair/typebox';
import { MemexError, parseDate, parseQuery, type ParsedQuery, type RuleActions } from '@memex/contracts';

type Address = { name: string; address: string };
export type Actions = Static<typeof RuleActions>;

/** What a rule looks at: a message as memex.mail.thread gives it (text is optional for the dry run's summary). */
export interface RuleMessage {
  account: string;
  from: Address[];
  to: Address[];
  cc?: Address[];
  subject: string;
  text?: string;
  date: string;
  labels: string[];
  read: boolean;
  starred: boolean;
  inbox: boolean;
}

/** A rule's filter: a query of memex.search's language, parsed once and its dates checked. */
export interface RuleQuery {
  parsed: ParsedQuery;
  after: Date[];
  before: Date[];
}

/**
 * Reads a rule's query in the search syntax (words, "phrases", prefix*, -exclusions, from:, to:,
 * label:, kind:, source:, before:, after:). An empty or unreadable query is invalid_params.
 */
export function parseRule(query: string): RuleQuery {
  const parsed = parseQuery(query);
  const terms =
    parsed.words.length +
    parsed.prefixes.length +
    parsed.phrases.length +
    parsed.excluded.length +
    Object.values(parsed.filters).reduce((n, values) => n + values.length, 0);
  if (terms === 0)
    throw new MemexError(
      'invalid_params',
      'params.query: a rule needs at least one term (words, "a phrase", from:, to:, label:, before:, after:...)',
    );
  return {
    parsed,
    after: parsed.filters.after.map((v) => parseDate(v, 'after')),
    before: parsed.filters.before.map((v) => parseDate(v, 'before')),
  };
}

const people = (list: Address[]) => list.map((a) => `${a.name} <${a.address}>`.toLowerCase()).join(', ');
const words = (text: string) =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
const collapse = (text: string) => words(text).join(' ');

/**
 * Whether a message matches, with search's meaning of each part: several values of one filter
 * are alternatives, every filter and every word must hold; from:/to: are parts of a name or
 * address, label: a whole label. Words are compared as written (search also stems them, so a
 * dry run through search can offer more candidates; this is what decides).
 */
export function matches(rule: RuleQuery, message: RuleMessage): boolean {
  const { filters, words: wanted, prefixes, phrases, excluded } = rule.parsed;
  const anyOf = (values: string[], holds: (value: string) => boolean) => values.length === 0 || values.some(holds);
  const from = people(message.from);
  const to = people([...message.to, ...(message.cc ?? [])]);
  const date = new Date(message.date);
  const text = `${message.subject}\n${message.text ?? ''}`;
  const tokens = new Set(words(text));
  const flat = collapse(text);
  // A term of several words (a phrase, or e-mail) is looked for as a run of words.
  const has = (term: string) => (collapse(term).includes(' ') ? flat.includes(collapse(term)) : tokens.has(term));
  return (
    anyOf(filters.from, (v) => from.includes(v.toLowerCase())) &&
    anyOf(filters.to, (v) => to.includes(v.toLowerCase())) &&
    anyOf(filters.label, (v) => message.labels.includes(v)) &&
    anyOf(filters.kind, (v) => v.toLowerCase() === 'email') &&
    // author: is a paper's author, object: and tag: what a photo shows: no message has one.
    anyOf(filters.author, () => false) &&
    anyOf(filters.object, () => false) &&
    anyOf(filters.tag, () => false) &&
    anyOf(filters.source, (v) => message.account === v || message.account.startsWith(`${v}:`)) &&
    rule.after.every((d) => date >= d) &&
    rule.before.every((d) => date < d) &&
    wanted.every(has) &&
    prefixes.every((p) => [...tokens].some((t) => t.startsWith(p))) &&
    phrases.every(has) &&
    !excluded.some(has)
  );
}

/** What the actions would change on this message (the dry run's answer; empty when nothing). */
export function wouldChange(actions: Actions, message: RuleMessage): string[] {
  return [
    ...(actions.add_labels ?? []).filter((l) => !message.labels.includes(l)).map((l) => `label +${l}`),
    ...(actions.archive && message.inbox ? ['archive'] : []),
    ...(actions.star && !message.starred ? ['star'] : []),
    ...(actions.mark_read && !message.read ? ['mark read'] : []),
    ...(actions.forward_to ? [`forward to ${actions.forward_to}`] : []),
  ];
}
