import { Injectable } from '@nestjs/common';
import type { Insertable, Transaction } from 'kysely';
import {
  ItemDeleted,
  ItemIngested,
  LocationReachable,
  LocationUnreachable,
  SourceAdded,
  SourceConfigured,
  SourceErrored,
  SourceFileDropped,
  SourceFileMoved,
  SourceFileRecorded,
  SourceFileRejected,
  SourceFileLeaving,
  SourceMailboxRead,
  SourceArchiveRead,
  SourcePaused,
  SourceRemoved,
  SourceResumed,
  SourceScanned,
  type EventOf,
} from '@memex/contracts';
import { parseLocation, parseWorkerRest } from '@memex/locations';
import { On, OnBatch, Projector, type LoggedOf } from '@memex/runtime';
import { sourcesMigrations } from './migrations.js';
import type { FilesTable, SourcesDatabase } from './schema.js';

type Trx = Transaction<SourcesDatabase>;

/**
 * The sources read model: each source's settings and state, and path → item for its files.
 * Everything derives from the log, so `memex replay sources` rebuilds it and a restarted service
 * knows every file it has already made an item (nothing is ingested twice).
 */
@Injectable()
@Projector({ name: 'sources', migrations: sourcesMigrations })
export class SourcesProjector {
  @On(SourceAdded)
  async added(trx: Trx, event: EventOf<typeof SourceAdded>, seq: number): Promise<void> {
    const { id, kind, root, settings } = event.data;
    await trx
      .insertInto('sources')
      .values({
        id,
        kind,
        root,
        settings: JSON.stringify(settings),
        paused: false,
        error: null,
        unreachable_since: null,
        unreachable_why: null,
        last_scan: JSON.stringify(null),
        added_at: new Date(event.occurred_at),
        seq,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
  }

  @On(SourceConfigured)
  async configured(trx: Trx, event: EventOf<typeof SourceConfigured>, seq: number): Promise<void> {
    await trx
      .updateTable('sources')
      .set({ settings: JSON.stringify(event.data.settings), seq })
      .where('id', '=', event.data.id)
      .execute();
  }

  @On(SourcePaused)
  async paused(trx: Trx, event: EventOf<typeof SourcePaused>, seq: number): Promise<void> {
    await trx.updateTable('sources').set({ paused: true, seq }).where('id', '=', event.data.id).execute();
  }

  @On(SourceResumed)
  async resumed(trx: Trx, event: EventOf<typeof SourceResumed>, seq: number): Promise<void> {
    await trx.updateTable('sources').set({ paused: false, seq }).where('id', '=', event.data.id).execute();
  }

  @On(SourceRemoved)
  async removed(trx: Trx, event: EventOf<typeof SourceRemoved>): Promise<void> {
    await trx.deleteFrom('files').where('source_id', '=', event.data.id).execute();
    await trx.deleteFrom('sources').where('id', '=', event.data.id).execute();
  }

  @On(SourceScanned)
  async scanned(trx: Trx, event: EventOf<typeof SourceScanned>, seq: number): Promise<void> {
    const { id, ...scan } = event.data;
    await trx
      .updateTable('sources')
      .set({ last_scan: JSON.stringify({ ...scan, finished_at: event.occurred_at }), error: null, seq })
      .where('id', '=', id)
      .execute();
  }

  @On(SourceErrored)
  async errored(trx: Trx, event: EventOf<typeof SourceErrored>, seq: number): Promise<void> {
    await trx.updateTable('sources').set({ error: event.data.reason, seq }).where('id', '=', event.data.id).execute();
  }

  /** A scan records thousands of files at once: one statement per run. */
  @OnBatch(SourceFileRecorded)
  async recorded(trx: Trx, run: LoggedOf<typeof SourceFileRecorded>[]): Promise<void> {
    // The same path twice in a run (changed twice): the later one wins.
    const rows = new Map(
      run.map(({ seq, event: { data } }) => [
        `${data.source_id}\0${data.path}`,
        {
          source_id: data.source_id,
          path: data.path,
          item_id: data.item_id,
          external_id: data.external_id,
          sha256: data.sha256,
          in_place: data.in_place,
          size: data.size,
          modified_at: new Date(data.modified_at),
          rejected: null,
          mailbox: false,
          mbox_tail: null,
          leaving_since: null,
          archive: null,
          archive_passed_over: null,
          seq,
        },
      ]),
    );
    await trx
      .insertInto('files')
      .values([...rows.values()])
      .onConflict((oc) =>
        oc.columns(['source_id', 'path']).doUpdateSet((eb) => ({
          item_id: eb.ref('excluded.item_id'),
          external_id: eb.ref('excluded.external_id'),
          sha256: eb.ref('excluded.sha256'),
          in_place: eb.ref('excluded.in_place'),
          size: eb.ref('excluded.size'),
          modified_at: eb.ref('excluded.modified_at'),
          rejected: null,
          mailbox: false,
          mbox_tail: null,
          leaving_since: null,
          archive: null,
          archive_passed_over: null,
          seq: eb.ref('excluded.seq'),
        })),
      )
      .execute();
  }

  @On(SourceFileMoved)
  async moved(trx: Trx, event: EventOf<typeof SourceFileMoved>, seq: number): Promise<void> {
    const { source_id, from, to, modified_at } = event.data;
    const row = await trx
      .deleteFrom('files')
      .where('source_id', '=', source_id)
      .where('path', '=', from)
      .returningAll()
      .executeTakeFirst();
    if (!row) return;
    await trx
      .insertInto('files')
      .values({
        ...row,
        path: to,
        modified_at: new Date(modified_at),
        mbox_tail: null,
        leaving_since: null,
        archive_passed_over: row.archive_passed_over ? JSON.stringify(row.archive_passed_over) : null,
        seq,
      })
      .onConflict((oc) =>
        oc.columns(['source_id', 'path']).doUpdateSet({
          item_id: row.item_id,
          external_id: row.external_id,
          sha256: row.sha256,
          in_place: row.in_place,
          size: row.size,
          modified_at: new Date(modified_at),
          rejected: null,
          leaving_since: null,
          seq,
        }),
      )
      .execute();
  }

  @On(SourceFileDropped)
  async dropped(trx: Trx, event: EventOf<typeof SourceFileDropped>): Promise<void> {
    await trx
      .deleteFrom('files')
      .where('source_id', '=', event.data.source_id)
      .where('path', '=', event.data.path)
      .execute();
  }

  @On(SourceFileLeaving)
  async leaving(trx: Trx, event: EventOf<typeof SourceFileLeaving>, seq: number): Promise<void> {
    const { source_id, path, item_id, since } = event.data;
    await trx
      .updateTable('files')
      .set({ leaving_since: new Date(since), seq })
      .where('source_id', '=', source_id)
      .where('path', '=', path)
      .where('item_id', '=', item_id)
      .execute();
  }

  @On(SourceFileRejected)
  async rejected(trx: Trx, event: EventOf<typeof SourceFileRejected>, seq: number): Promise<void> {
    await upsertFile(trx, notAnItem(event.data, seq, { rejected: event.data.reason }));
  }

  @On(SourceMailboxRead)
  async mailboxRead(trx: Trx, event: EventOf<typeof SourceMailboxRead>, seq: number): Promise<void> {
    const tail = event.data.tail ? JSON.stringify(event.data.tail) : null;
    await upsertFile(trx, { ...notAnItem(event.data, seq, { mailbox: true }), mbox_tail: tail });
  }

  /**
   * A zip or an Evernote export read as its members: the archive's row, as an mbox's, with what
   * of it was passed over; a read that stopped at damage says why (listed with the failures).
   */
  @On(SourceArchiveRead)
  async archiveRead(trx: Trx, event: EventOf<typeof SourceArchiveRead>, seq: number): Promise<void> {
    const { archive, passed_over, damaged } = event.data;
    await upsertFile(trx, {
      ...notAnItem(event.data, seq, { mailbox: true, rejected: damaged ?? null }),
      archive,
      archive_passed_over: JSON.stringify(passed_over),
    });
  }

  /**
   * Items located on a worker (the worker ingests them itself): which worker, so its counts and
   * the pipelines' work for its items are known from the read model. A worker's item keeps its
   * worker (a move there is a new location on the same worker). Other items are not kept.
   */
  @OnBatch(ItemIngested)
  async itemsIngested(trx: Trx, run: LoggedOf<typeof ItemIngested>[]): Promise<void> {
    const rows = new Map<string, { item_id: string; worker: string; location: string; seq: number }>();
    for (const { seq, event } of run) {
      const worker = workerOf(event.data.location);
      if (worker) rows.set(event.data.id, { item_id: event.data.id, worker, location: event.data.location!, seq });
    }
    if (rows.size === 0) return;
    await trx
      .insertInto('worker_items')
      .values([...rows.values()])
      .onConflict((oc) =>
        oc.column('item_id').doUpdateSet((eb) => ({
          worker: eb.ref('excluded.worker'),
          location: eb.ref('excluded.location'),
          seq: eb.ref('excluded.seq'),
        })),
      )
      .execute();
  }

  /** An item deleted (its file gone, or by hand): its paths are no longer items. */
  @OnBatch(ItemDeleted)
  async itemsDeleted(trx: Trx, run: LoggedOf<typeof ItemDeleted>[]): Promise<void> {
    const ids = run.map(({ event }) => event.data.id);
    await trx.deleteFrom('files').where('item_id', 'in', ids).execute();
    await trx.deleteFrom('worker_items').where('item_id', 'in', ids).execute();
  }

  @On(LocationUnreachable)
  async unreachable(trx: Trx, event: EventOf<typeof LocationUnreachable>, seq: number): Promise<void> {
    await trx
      .updateTable('sources')
      .set({ unreachable_since: new Date(event.occurred_at), unreachable_why: event.data.why, seq })
      .where('id', '=', event.data.source_id)
      .where('root', '=', event.data.prefix)
      .where('unreachable_since', 'is', null)
      .execute();
  }

  @On(LocationReachable)
  async reachable(trx: Trx, event: EventOf<typeof LocationReachable>, seq: number): Promise<void> {
    await trx
      .updateTable('sources')
      .set({ unreachable_since: null, unreachable_why: null, seq })
      .where('id', '=', event.data.source_id)
      .where('root', '=', event.data.prefix)
      .execute();
  }
}

/** The row of a path that is no item: a file ingest refused, or an mbox (its messages are items). */
function notAnItem(
  { source_id, path, size, modified_at }: { source_id: string; path: string; size: number; modified_at: string },
  seq: number,
  { rejected = null, mailbox = false }: { rejected?: string | null; mailbox?: boolean },
): Insertable<FilesTable> {
  return {
    source_id,
    path,
    item_id: null,
    external_id: null,
    sha256: null,
    in_place: false,
    size,
    modified_at: new Date(modified_at),
    rejected,
    mailbox,
    mbox_tail: null,
    leaving_since: null,
    archive: null,
    archive_passed_over: null,
    seq,
  };
}

/** A file's row, whatever was there before under its path. */
async function upsertFile(trx: Trx, row: Insertable<FilesTable>): Promise<void> {
  await trx
    .insertInto('files')
    .values(row)
    .onConflict((oc) => oc.columns(['source_id', 'path']).doUpdateSet(row))
    .execute();
}

/** The worker a location is on (`worker:<name>:/…`), or null. */
function workerOf(location: string | undefined): string | null {
  if (!location?.startsWith('worker:')) return null;
  return parseWorkerRest(parseLocation(location).rest).name;
}
