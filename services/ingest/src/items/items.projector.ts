import { Injectable } from '@nestjs/common';
import type { Transaction } from 'kysely';
import type { EventOf, IdentityClaimed, ItemDeleted, MailFlagsChanged, NotePut } from '@memex/contracts';
import { BlobStore } from '@memex/blobs';
import type { LoggedEvent } from '@memex/bus';
import { Projector, type Projection } from '@memex/runtime';
import type { ItemIngestedEvent } from '../ingest/identities.js';
import { messageRow, mailLabelsAfter } from '../mail/message-row.js';
import { ingestMigrations } from './migrations.js';
import type { IngestDatabase } from './schema.js';

type Trx = Transaction<IngestDatabase>;

/**
 * Builds the ingest read model from the log: `items` (every item), `messages` (the mail views)
 * and `identities` (which item each claimed identity names). Rows derive from events (and the
 * content-addressed text blobs they name) only, so a replay is identical.
 */
@Injectable()
@Projector({ name: 'ingest', migrations: ingestMigrations })
export class ItemsProjector implements Projection {
  constructor(private readonly blobs: BlobStore) {}

  async apply(trx: Trx, { seq, event }: LoggedEvent): Promise<void> {
    switch (event.type) {
      case 'note.put':
        return this.notePut(trx, seq, event as EventOf<typeof NotePut>);
      case 'item.ingested':
        return this.itemIngested(trx, seq, event as ItemIngestedEvent);
      case 'identity.claimed':
        return this.identityClaimed(trx, seq, event as EventOf<typeof IdentityClaimed>);
      case 'mail.flags_changed':
        return this.flagsChanged(trx, seq, event as EventOf<typeof MailFlagsChanged>);
      case 'item.deleted':
        return this.itemDeleted(trx, seq, event as EventOf<typeof ItemDeleted>);
    }
  }

  private async notePut(trx: Trx, seq: number, event: EventOf<typeof NotePut>): Promise<void> {
    const { id, title, body } = event.data;
    if (await this.isDeleted(trx, id)) return;
    const row = {
      id,
      kind: 'note',
      title,
      text: body,
      labels: event.labels,
      source_kind: 'memex',
      source_id: 'notes',
      external_id: null,
      occurred_at: new Date(event.occurred_at),
      added_at: new Date(event.recorded_at),
      made_by_kind: event.actor.kind,
      made_by_id: event.actor.id,
      meta: {},
      seq,
      origin: null,
      identity: null,
      content_type: null,
      content_sha256: null,
      text_sha256: null,
      size: null,
      parent_id: null,
    };
    await trx
      .insertInto('items')
      .values(row)
      // A replaced note keeps when it first entered; everything else is the newest version.
      .onConflict((oc) =>
        oc.column('id').doUpdateSet({
          title: row.title,
          text: row.text,
          labels: row.labels,
          occurred_at: row.occurred_at,
          made_by_kind: row.made_by_kind,
          made_by_id: row.made_by_id,
          seq,
        }),
      )
      .execute();
  }

  private async itemIngested(trx: Trx, seq: number, event: ItemIngestedEvent): Promise<void> {
    const data = event.data;
    if (await this.isDeleted(trx, data.id)) return;
    const text = (await this.blobs.get(data.text_sha256)).toString('utf8');
    const row = {
      id: data.id,
      kind: data.kind,
      title: data.title,
      text,
      labels: event.labels,
      spam: event.spam ?? false,
      source_kind: data.source.kind,
      source_id: data.source.id,
      external_id: data.external_id,
      occurred_at: new Date(event.occurred_at),
      added_at: new Date(event.recorded_at),
      made_by_kind: event.actor.kind,
      made_by_id: event.actor.id,
      meta: data.meta,
      seq,
      origin: data.origin,
      identity: data.identity,
      content_type: data.content_type,
      content_sha256: data.content_sha256,
      text_sha256: data.text_sha256,
      size: data.size,
      revision: data.revision,
      parent_id: data.parent_id ?? null,
    };
    // A new revision replaces the content; the item keeps when it first entered.
    const { added_at: _firstAdded, id: _id, ...revised } = row;
    await trx
      .insertInto('items')
      .values(row)
      .onConflict((oc) => oc.column('id').doUpdateSet(revised))
      .execute();
    if (data.kind === 'email' && !data.parent_id) {
      // A message never changes: its row is written once; flags change through mail.flags_changed.
      await trx
        .insertInto('messages')
        .values(messageRow(event, text, seq))
        .onConflict((oc) => oc.column('item_id').doNothing())
        .execute();
    }
  }

  private async identityClaimed(trx: Trx, seq: number, event: EventOf<typeof IdentityClaimed>): Promise<void> {
    const row = {
      key_hash: event.subject.slice('identity:'.length),
      key: event.data.key,
      item_id: event.data.item_id,
      claimed_at: new Date(event.recorded_at),
      seq,
    };
    await trx
      .insertInto('identities')
      .values(row)
      .onConflict((oc) => oc.column('key_hash').doUpdateSet({ item_id: row.item_id, claimed_at: row.claimed_at, seq }))
      .execute();
  }

  private async flagsChanged(trx: Trx, seq: number, event: EventOf<typeof MailFlagsChanged>): Promise<void> {
    const { id, read, starred, archived, trashed } = event.data;
    const current = await trx.selectFrom('messages').select('mail_labels').where('item_id', '=', id).executeTakeFirst();
    if (!current) return;
    await trx
      .updateTable('messages')
      .set({
        ...(read !== undefined ? { read } : {}),
        ...(starred !== undefined ? { starred } : {}),
        ...(archived !== undefined ? { inbox: !archived } : {}),
        ...(trashed !== undefined ? { trashed } : {}),
        mail_labels: mailLabelsAfter(current.mail_labels, event.data),
        seq,
      })
      .where('item_id', '=', id)
      .execute();
  }

  /** The item and its attachments leave every table; events about them that come later are ignored. */
  private async itemDeleted(trx: Trx, seq: number, event: EventOf<typeof ItemDeleted>): Promise<void> {
    const { id } = event.data;
    await trx.deleteFrom('items').where('id', '=', id).execute();
    await trx.deleteFrom('messages').where('item_id', '=', id).execute();
    await trx.deleteFrom('identities').where('item_id', '=', id).execute();
    await trx.insertInto('tombstones').values({ id, seq }).onConflict((oc) => oc.doNothing()).execute();
  }

  private async isDeleted(trx: Trx, id: string): Promise<boolean> {
    return (await trx.selectFrom('tombstones').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
  }
}
