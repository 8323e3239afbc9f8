import type { PushesTable } from '../projection/schema.js';

/** Gmail's system labels: their ids are their names. */
export const SYSTEM_LABELS = new Set([
  'INBOX',
  'UNREAD',
  'STARRED',
  'IMPORTANT',
  'SENT',
  'DRAFT',
  'TRASH',
  'SPAM',
  'CHAT',
]);

/** Labels by name, as the log and the mail views carry them: system ids as they are, user labels by their name. */
export function labelNames(labelIds: readonly string[], names: ReadonlyMap<string, string>): string[] {
  return labelIds
    .map((id) => (SYSTEM_LABELS.has(id) || id.startsWith('CATEGORY_') ? id : (names.get(id) ?? id)))
    .sort();
}

/** What one or more memex changes to a message ask of Gmail, as labels (by name) to add and remove. */
export interface LabelDelta {
  add: string[];
  remove: string[];
}

/**
 * The memex changes to one message, oldest first, as one delta: a later change to the same
 * label overrides an earlier one. Trash is a label here too (written with messages.trash).
 */
export function deltaOf(changes: readonly PushesTable['change'][]): LabelDelta {
  const wanted = new Map<string, boolean>();
  for (const change of changes) {
    if (change.read !== undefined) wanted.set('UNREAD', !change.read);
    if (change.starred !== undefined) wanted.set('STARRED', change.starred);
    if (change.archived !== undefined) wanted.set('INBOX', !change.archived);
    if (change.trashed !== undefined) wanted.set('TRASH', change.trashed);
    for (const label of change.labels_added ?? []) wanted.set(label, true);
    for (const label of change.labels_removed ?? []) wanted.set(label, false);
  }
  const add = [...wanted]
    .filter(([, on]) => on)
    .map(([label]) => label)
    .sort();
  const remove = [...wanted]
    .filter(([, on]) => !on)
    .map(([label]) => label)
    .sort();
  return { add, remove };
}

/** Labels after a delta. */
export function applyDelta(labels: readonly string[], delta: LabelDelta): string[] {
  const removed = new Set(delta.remove);
  return [...new Set([...labels.filter((label) => !removed.has(label)), ...delta.add])].sort();
}

export function sameLabels(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const sorted = [...b].sort();
  return [...a].sort().every((label, i) => label === sorted[i]);
}
