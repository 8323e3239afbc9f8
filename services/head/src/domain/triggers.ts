import {
  agentScope,
  type Commitment,
  EntityMerged,
  isEventOf,
  isVisible,
  ItemIngested,
  LinkAdded,
  LinksInferred,
  OWNER_SCOPE,
  type Address,
  type EventEnvelope,
  type Scope,
  type ScopeRule,
  type TriggerAction,
  type TriggerFilter,
  type TriggerOn,
} from '@memex/contracts';
import type { Static } from '@sinclair/typebox';

export interface ActiveTrigger {
  id: string;
  name: string;
  on: Static<typeof TriggerOn>;
  filter: Static<typeof TriggerFilter>;
  action: Static<typeof TriggerAction>;
  scopeLabels: string[] | null;
  fromSeq: number;
  registeredAt: Date;
}

/** The scope a trigger fires within: the labels it was registered with, under today's rules. */
export function triggerScope(trigger: ActiveTrigger, rules: ScopeRule[]): Scope {
  return trigger.scopeLabels === null ? OWNER_SCOPE : agentScope(`trigger:${trigger.id}`, trigger.scopeLabels, rules);
}

interface ItemFacts {
  kind: string;
  title: string;
  sourceKind: string;
  origin: string;
  revision: number;
  from: string[];
  to: string[];
}

function addressesIn(...lists: Address[][]): string[] {
  return lists.flat().map((entry) => entry.address.toLowerCase());
}

/** What a trigger can filter on, read from an item.ingested event (other events reveal no item). */
function itemFacts(event: EventEnvelope): ItemFacts | undefined {
  if (!isEventOf(ItemIngested, event)) return undefined;
  const { data } = event;
  const mail = data.kind === 'email' ? data.meta : null;
  return {
    kind: data.kind,
    title: data.title,
    sourceKind: data.source.kind,
    origin: data.origin,
    revision: data.revision,
    from: mail ? addressesIn(mail.from) : [],
    to: mail ? addressesIn(mail.to, mail.cc) : [],
  };
}

/** `ann@example.com` matches itself; `@example.com` matches every address at that domain. */
function addressMatches(pattern: string, addresses: string[]): boolean {
  const wanted = pattern.trim().toLowerCase();
  return addresses.some((address) => (wanted.startsWith('@') ? address.endsWith(wanted) : address === wanted));
}

/**
 * The things whose links an event changes, by key (items are not things): a link added, links a
 * pipeline inferred from an item, a merge. A retraction or confirmation names only a link id,
 * and the graph's own readings of items (meetings, signatures, cards) are not events of their
 * own, so neither fires entity.changed.
 */
export function thingsChanged(event: EventEnvelope): string[] {
  const refs = isEventOf(LinkAdded, event)
    ? [event.data.src, event.data.dst]
    : isEventOf(LinksInferred, event)
      ? event.data.links.flatMap((link) => [link.src, link.dst])
      : isEventOf(EntityMerged, event)
        ? [event.data.from, event.data.into]
        : [];
  return [...new Set(refs.filter((ref) => !ref.startsWith('item:')))];
}

/** Filters a trigger of each kind cannot apply (named in the refusal rather than ignored). */
const CANNOT_FILTER: Record<Static<typeof TriggerOn>, (keyof Static<typeof TriggerFilter>)[]> = {
  'mail.received': ['thing'],
  'item.added': ['thing'],
  'entity.changed': ['from', 'to', 'source', 'words'],
  'commitment.due': ['source', 'kind', 'thing', 'labels'],
};

export function misplacedFilters(on: Static<typeof TriggerOn>, filter: Static<typeof TriggerFilter>): string[] {
  return CANNOT_FILTER[on].filter((name) => filter[name] !== undefined);
}

/** The moment a commitment falls due: a day means its start (UTC: the text gave no zone), a time itself. */
export function dueAt(due: string): Date | null {
  const at = /^\d{4}-\d{2}-\d{2}$/.test(due) ? Date.parse(`${due}T00:00:00Z`) : Date.parse(due);
  return Number.isNaN(at) ? null : new Date(at);
}

/**
 * commitment.due: an open commitment (as the trigger's scope lists them) whose due moment has come
 * and came after the trigger was registered (not the archive's backlog), passing the filters.
 */
export function commitmentFires(trigger: ActiveTrigger, commitment: Commitment, now: Date): boolean {
  const at = commitment.due ? dueAt(commitment.due) : null;
  if (!at || at > now || at <= trigger.registeredAt) return false;
  const { filter } = trigger;
  const addresses = (parties: Commitment['by']) => parties.map((p) => p.address.toLowerCase());
  if (filter.from && !addressMatches(filter.from, addresses(commitment.by))) return false;
  if (filter.to && !addressMatches(filter.to, addresses(commitment.to))) return false;
  if (filter.words && !commitment.what.toLowerCase().includes(filter.words.toLowerCase())) return false;
  return true;
}

/** entity.changed: a thing the filter names (by key, or kind) among those the event changed, seen within the scope. */
function thingFires(trigger: ActiveTrigger, event: EventEnvelope, rules: ScopeRule[]): boolean {
  const { filter } = trigger;
  const things = thingsChanged(event).filter(
    (key) => (!filter.thing || key === filter.thing) && (!filter.kind || key.startsWith(`${filter.kind}:`)),
  );
  if (things.length === 0) return false;
  // A graph event reveals what its kind and labels say; one without a kind reaches only the owner.
  if (
    !isVisible(triggerScope(trigger, rules), {
      kind: event.kind ?? '',
      labels: event.labels,
      spam: event.spam ?? false,
    })
  )
    return false;
  return !filter.labels || filter.labels.every((label) => event.labels.includes(label));
}

/**
 * Whether an event fires a trigger: of the trigger's kind, after it was registered, visible
 * within its scope, and passing every filter it sets. mail.received is live mail only (a
 * connector's mirrored message, never an archive import: seed §4.5).
 */
export function fires(trigger: ActiveTrigger, seq: number, event: EventEnvelope, rules: ScopeRule[]): boolean {
  if (seq <= trigger.fromSeq || trigger.on === 'commitment.due') return false;
  if (trigger.on === 'entity.changed') return thingFires(trigger, event, rules);
  const item = itemFacts(event);
  if (!item || item.revision !== 1) return false;
  if (trigger.on === 'mail.received' && !(item.kind === 'email' && item.origin === 'mirrored')) return false;
  if (
    !isVisible(triggerScope(trigger, rules), {
      kind: event.kind ?? item.kind,
      labels: event.labels,
      spam: event.spam ?? false,
    })
  ) {
    return false;
  }
  const { filter } = trigger;
  if (filter.from && !addressMatches(filter.from, item.from)) return false;
  if (filter.to && !addressMatches(filter.to, item.to)) return false;
  if (filter.labels && !filter.labels.every((label) => event.labels.includes(label))) return false;
  if (filter.source && filter.source !== item.sourceKind) return false;
  if (filter.kind && filter.kind !== item.kind) return false;
  if (filter.words && !item.title.toLowerCase().includes(filter.words.toLowerCase())) return false;
  return true;
}
