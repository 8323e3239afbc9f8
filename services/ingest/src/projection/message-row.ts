import type { Insertable } from 'kysely';
import { isInboxFolder, type MailFlagsChanged, type EventOf, type ItemDataOf } from '@memex/contracts';
import { gmailState } from '../domain/handlers/index.js';
import type { ItemIngestedEvent } from '../commands/identities.js';
import type { MessagesTable } from './schema.js';

const SNIPPET_LENGTH = 200;

/** The account a message belongs to: its source's name (`import:mbox:archive-2009`, `gmail:me@example.com`). */
export function accountOf(source: { kind: string; id: string }): string {
  return source.id ? `${source.kind}:${source.id}` : source.kind;
}

export function snippetOf(text: string): string {
  // The head of a long text gives the same snippet when it flattens to more than the snippet:
  // whitespace is collapsed from the start, so the first characters do not depend on the rest.
  const head = text
    .slice(0, SNIPPET_LENGTH * 4)
    .replace(/\s+/g, ' ')
    .trim();
  if (head.length > SNIPPET_LENGTH) return `${head.slice(0, SNIPPET_LENGTH - 1)}…`;
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > SNIPPET_LENGTH ? `${flat.slice(0, SNIPPET_LENGTH - 1)}…` : flat;
}

/**
 * A message's row in the mail views, from its `item.ingested`. The folder is a label (seed §4.5
 * "As built"), except the inbox, which is the `inbox` flag so that archiving can clear it.
 */
export function messageRow(
  event: ItemIngestedEvent,
  data: ItemDataOf<'email'>,
  text: string,
  seq: number,
): Insertable<MessagesTable> {
  const meta = data.meta;
  // A Takeout message's Gmail labels say its flags, as mail-sync's do for a synced one.
  const gmail = meta.gmail ? gmailState(meta.gmail.labels) : null;
  return {
    item_id: data.id,
    account: accountOf(data.source),
    origin: data.origin,
    thread_key: meta.threadKey,
    message_id: meta.messageId,
    subject: meta.subject,
    from: JSON.stringify(meta.from),
    to: JSON.stringify(meta.to),
    cc: JSON.stringify(meta.cc),
    date: new Date(event.occurred_at),
    snippet: snippetOf(text),
    mail_labels: meta.labels.filter((label) => !isInboxFolder(label)),
    read: meta.flags.read,
    starred: meta.flags.starred,
    inbox: gmail?.inbox ?? isInboxFolder(meta.folder),
    trashed: gmail?.trashed ?? false,
    attachments: meta.attachments.length,
    kind: data.kind,
    labels: event.labels,
    spam: event.spam ?? false,
    seq,
  };
}

/** Mail labels after a flags change: removals win over additions of the same label. */
export function mailLabelsAfter(labels: string[], change: EventOf<typeof MailFlagsChanged>['data']): string[] {
  const removed = new Set(change.labels_removed ?? []);
  return [...new Set([...labels, ...(change.labels_added ?? [])])].filter((label) => !removed.has(label));
}
