import type { Static } from '@sinclair/typebox';
import type { RuleActions } from '@memex/contracts';

type Address = { name: string; address: string };
export type Actions = Static<typeof RuleActions>;

/** What a rule looks at: a message as the mail views list it. */
export interface RuleMessage {
  from: Address[];
  to: Address[];
  subject: string;
  labels: string[];
  read: boolean;
  starred: boolean;
  inbox: boolean;
}

type Term = { field: 'from' | 'to' | 'label' | 'subject'; value: string; negated: boolean };

/** One term: `-`? then `field:`? then a "quoted value" or a bare one. */
const TERM = /(-?)(?:(from|to|label|subject):)?(?:"([^"]*)"?|(\S+))/gi;

/** A rule's query: from:, to:, label:, subject: and bare words (in the subject), `-` to exclude; all must hold. */
export function parseRule(query: string): Term[] {
  const terms: Term[] = [];
  for (const [, minus, field, quoted, bare] of query.matchAll(TERM)) {
    const value = (quoted ?? bare ?? '').trim().toLowerCase();
    if (!value) continue;
    terms.push({ field: (field?.toLowerCase() ?? 'subject') as Term['field'], value, negated: minus === '-' });
  }
  if (terms.length === 0)
    throw new Error('a rule needs at least one term (from:, to:, label:, or words of the subject)');
  return terms;
}

function addresses(list: Address[]): string {
  return list.map((a) => `${a.name} <${a.address}>`.toLowerCase()).join(', ');
}

function holds(term: Term, message: RuleMessage): boolean {
  switch (term.field) {
    case 'from':
      return addresses(message.from).includes(term.value);
    case 'to':
      return addresses(message.to).includes(term.value);
    case 'label':
      return message.labels.some((label) => label.toLowerCase() === term.value);
    case 'subject':
      return message.subject
        .toLowerCase()
        .split(/[^\p{L}\p{N}]+/u)
        .includes(term.value);
  }
}

export function matches(terms: Term[], message: RuleMessage): boolean {
  return terms.every((term) => holds(term, message) !== term.negated);
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
