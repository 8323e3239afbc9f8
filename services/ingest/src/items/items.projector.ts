import { Injectable } from '@nestjs/common';
import type { Transaction } from 'kysely';
import type { EventOf, ItemDeleted, NotePut } from '@memex/contracts';
import type { LoggedEvent } from '@memex/bus';
import { Projector, type Projection } from '@memex/runtime';
import { ingestMigrations } from './migrations.js';
import type { IngestDatabase } from './schema.js';

type Trx = Transaction<IngestDatabase>;

/** Builds `ingest.items` from the log. Rows derive from events only, so a replay is identical. */
@Injectable()
@Projector({ name: 'ingest', migrations: ingestMigrations })
export class ItemsProjector implements Projection {
  async apply(trx: Trx, { seq, event }: LoggedEvent): Promise<void> {
    switch (event.type) {
      case 'note.put':
        return this.notePut(trx, seq, event as EventOf<typeof NotePut>);
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

  private async itemDeleted(trx: Trx, seq: number, event: EventOf<typeof ItemDeleted>): Promise<void> {
    await trx.deleteFrom('items').where('id', '=', event.data.id).execute();
    await trx.insertInto('tombstones').values({ id: event.data.id, seq }).onConflict((oc) => oc.doNothing()).execute();
  }

  private async isDeleted(trx: Trx, id: string): Promise<boolean> {
    return (await trx.selectFrom('tombstones').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
  }
}
