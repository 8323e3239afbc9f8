import { readFileSync } from 'node:fs';
import { Injectable } from '@nestjs/common';
import { sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import {
  eventCatalog,
  GmailMessageSynced,
  ImapMessageSynced,
  ItemDeleted,
  ItemIngested,
  ItemUnderstood,
  LocationReachable,
  LocationUnreachable,
  MailFlagsChanged,
  MailSpamMarked,
  NotePut,
  PhotoAnalyzed,
  type Place,
  ThreadJoined,
  VideoAnalyzed,
  makerString,
  type EventOf,
} from '@memex/contracts';
import { BlobStore } from '@memex/blobs';
import type { LoggedEvent } from '@memex/bus';
import {
  bulkLoading,
  On,
  OnBatch,
  Projector,
  type AfterBulkLoad,
  type BulkLanes,
  type LaneOf,
  type LoggedOf,
} from '@memex/runtime';
import type { ItemIngestedEvent } from '../commands/identities.js';
import { gmailState } from '../domain/handlers/index.js';
import { messageRow, mailLabelsAfter } from './message-row.js';
import { joinStagedThreads, joinThreads, stageThreads, threadIds } from './threads.js';
import { ingestMigrations } from './migrations.js';
import type { IngestDatabase } from './schema.js';

type Trx = Transaction<IngestDatabase>;

/**
 * The lane of an event in a rebuild's bulk load (see `ItemsProjector.bulkLanes`): its item's;
 * every thread.joined in one lane of their own (a key joined twice keeps the later's); none for
 * a location's reports, which touch every item under it.
 */
function itemLane(logged: LoggedEvent): string | undefined {
  const event = eventCatalog.upcast(logged.event);
  const data = event.data as { id?: string; item_id?: string };
  switch (event.type) {
    case ItemIngested.type:
    case NotePut.type:
    case ItemDeleted.type:
    case MailSpamMarked.type:
    case MailFlagsChanged.type:
    case GmailMessageSynced.type:
    case ImapMessageSynced.type:
      return data.id;
    case PhotoAnalyzed.type:
    case VideoAnalyzed.type:
    case ItemUnderstood.type:
      return data.item_id;
    case ThreadJoined.type:
      return ThreadJoined.type;
    default:
      return undefined;
  }
}

/**
 * Builds the ingest read model from the log: `items` (every item) and `messages` (the mail
 * views). Rows derive from events (and the content-addressed text blobs they name) only, so a
 * replay is identical. Identity claims are not projected: memex.ingest finds known items by the
 * keys on their rows, and the log answers for the rest.
 */
@Injectable()
@Projector({ name: 'ingest', migrations: ingestMigrations })
export class ItemsProjector implements BulkLanes<Kysely<IngestDatabase>>, AfterBulkLoad<Kysely<IngestDatabase>> {
  constructor(private readonly blobs: BlobStore) {}

  /**
   * A rebuild's bulk load goes in two lanes by item, one connection each, so that one lane's
   * statements are built while the other's run: an item's events touch its own rows, and what
   * items share, their threads, it stages and joins once the load is done (`afterBulkLoad`).
   */
  async bulkLanes(): Promise<LaneOf> {
    return itemLane;
  }

  /** A rebuild's bulk load is done: the threads of its messages, joined in log order. */
  async afterBulkLoad(db: Kysely<IngestDatabase>): Promise<void> {
    await joinStagedThreads(db);
  }

  /**
   * Runs of new items and notes go in with a few statements per run instead of a few per event
   * (an import publishes thousands a second); flags and deletions apply one by one, in order.
   */
  @OnBatch(ItemIngested, NotePut)
  async itemsAndNotes(trx: Trx, batch: LoggedOf<typeof ItemIngested | typeof NotePut>[]): Promise<void> {
    let run = new Run();
    for (const { seq, event } of batch) {
      // The same item twice in a run (a new revision) goes in a later statement: one statement
      // cannot upsert a row twice.
      if (run.has(event.data.id)) {
        await this.flush(trx, run);
        run = new Run();
      }
      if (event.type === 'item.ingested') run.items.set(event.data.id, { seq, event });
      else run.notes.set(event.data.id, { seq, event });
    }
    await this.flush(trx, run);
  }

  private async flush(trx: Trx, run: Run): Promise<void> {
    const ids = [...run.items.keys(), ...run.notes.keys()];
    if (ids.length === 0) return;
    const deleted = new Set(
      (await trx.selectFrom('tombstones').select('id').where('id', 'in', ids).execute()).map((row) => row.id),
    );
    const notes = [...run.notes.values()].filter(({ event }) => !deleted.has(event.data.id)).map(noteRow);
    if (notes.length > 0) {
      await trx
        .insertInto('items')
        .values(notes)
        // A replaced note keeps when it first entered; everything else is the newest version.
        .onConflict((oc) => oc.column('id').doUpdateSet(excluded(NOTE_REVISED)))
        .execute();
    }
    const items = [...run.items.values()].filter(({ event }) => !deleted.has(event.data.id));
    if (items.length === 0) return;
    // Read synchronously: a text blob is small and in the page cache, while the thread pool that
    // async reads queue on is busy with the fsyncs of blobs being ingested (reads waited seconds).
    const texts = items.map(({ event }) => readFileSync(this.blobs.pathOf(event.data.text_sha256), 'utf8'));
    await trx
      .insertInto('items')
      .values(items.map((item, i) => itemRow(item, texts[i]!)))
      // A new revision replaces the content; the item keeps when it first entered.
      .onConflict((oc) => oc.column('id').doUpdateSet(excluded(ITEM_REVISED)))
      .execute();
    // A message never changes: its row is written once; flags change through mail.flags_changed.
    const messages = [];
    const threads = [];
    for (const [i, { seq, event }] of items.entries()) {
      const { data } = event;
      if (data.kind !== 'email' || data.parent_id) continue;
      threads.push({ itemId: data.id, ids: threadIds(data.meta, data.identity), seq });
      messages.push(messageRow(event, data, texts[i]!, seq));
    }
    if (await bulkLoading(trx)) {
      // Joined after the load (see bulkLanes): no thread until then.
      await stageThreads(trx, threads);
      messages.forEach((row) => (row.thread_key = ''));
    } else {
      const keys = await joinThreads(trx, threads);
      messages.forEach((row, i) => (row.thread_key = keys[i]!));
    }
    if (messages.length > 0) {
      await trx
        .insertInto('messages')
        .values(messages)
        .onConflict((oc) => oc.column('item_id').doNothing())
        .execute();
    }
  }

  /**
   * Keys ingest joined into another thread's (thread.joined): what ThreadJoins has said, so it says
   * each join once — after a crash too, from what this holds at start.
   */
  @On(ThreadJoined)
  async threadJoined(trx: Trx, { data: { key, merged } }: EventOf<typeof ThreadJoined>): Promise<void> {
    const others = merged.filter((m) => m !== key);
    if (others.length === 0) return;
    await sql`insert into thread_joined (merged, key) select unnest(${others}::text[]), ${key}
      on conflict (merged) do update set key = excluded.key`.execute(trx);
  }

  /** A copy in a spam folder: the item and its message are spam, out of every view but spam's. */
  @On(MailSpamMarked)
  async spamMarked(trx: Trx, event: EventOf<typeof MailSpamMarked>, seq: number): Promise<void> {
    await trx.updateTable('items').set({ spam: true }).where('id', '=', event.data.id).execute();
    await trx.updateTable('messages').set({ spam: true, seq }).where('item_id', '=', event.data.id).execute();
  }

  @On(MailFlagsChanged)
  async flagsChanged(trx: Trx, event: EventOf<typeof MailFlagsChanged>, seq: number): Promise<void> {
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

  /**
   * mail-sync mirrors the message in Gmail: the item (new from the connector, or imported
   * earlier and upgraded in place, same id) is `mirrored` under the Gmail account, and its flags
   * are Gmail's labels as mail-sync last saw or wrote them.
   */
  @On(GmailMessageSynced)
  async gmailSynced(trx: Trx, event: EventOf<typeof GmailMessageSynced>, seq: number): Promise<void> {
    const { id, account, labels } = event.data;
    await this.mirrored(trx, id, `gmail:${account}`, labels, seq);
  }

  /** The same for a plain IMAP account: its folder and flags come as Gmail's words for them. */
  @On(ImapMessageSynced)
  async imapSynced(trx: Trx, event: EventOf<typeof ImapMessageSynced>, seq: number): Promise<void> {
    const { id, account, labels } = event.data;
    await this.mirrored(trx, id, `imap:${account}`, labels, seq);
  }

  private async mirrored(trx: Trx, id: string, account: string, labels: string[], seq: number): Promise<void> {
    await trx.updateTable('items').set({ origin: 'mirrored', seq }).where('id', '=', id).execute();
    await trx
      .updateTable('messages')
      .set({ ...gmailState(labels), origin: 'mirrored', account, seq })
      .where('item_id', '=', id)
      .execute();
  }

  /**
   * The sources service saw a folder (or a worker) go away: its items are kept and say since when
   * they cannot be read. The first report counts; a later one for the same items changes nothing.
   */
  @On(LocationUnreachable)
  async unreachable(trx: Trx, event: EventOf<typeof LocationUnreachable>, seq: number): Promise<void> {
    await trx
      .updateTable('items')
      .set({ unreachable_since: new Date(event.occurred_at), unreachable_why: event.data.why, seq })
      .where(locatedUnder(event.data.prefix))
      .where('unreachable_since', 'is', null)
      .execute();
  }

  @On(LocationReachable)
  async reachable(trx: Trx, event: EventOf<typeof LocationReachable>, seq: number): Promise<void> {
    await trx
      .updateTable('items')
      .set({ unreachable_since: null, unreachable_why: null, seq })
      .where(locatedUnder(event.data.prefix))
      .where('unreachable_since', 'is not', null)
      .execute();
  }

  /** The item and its attachments leave every table; events about them that come later are ignored. */
  @On(ItemDeleted)
  async itemDeleted(trx: Trx, event: EventOf<typeof ItemDeleted>, seq: number): Promise<void> {
    const { id } = event.data;
    await trx.deleteFrom('items').where('id', '=', id).execute();
    await trx.deleteFrom('messages').where('item_id', '=', id).execute();
    await trx
      .insertInto('tombstones')
      .values({ id, seq })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  /** Where media placed a photo (the latest analysis replaces the last; none clears it). */
  @On(PhotoAnalyzed)
  async photoPlaced(trx: Trx, { data }: EventOf<typeof PhotoAnalyzed>): Promise<void> {
    await this.place(trx, data.item_id, data.place);
  }

  @On(VideoAnalyzed)
  async videoPlaced(trx: Trx, { data }: EventOf<typeof VideoAnalyzed>): Promise<void> {
    await this.place(trx, data.item_id, data.place);
  }

  private async place(trx: Trx, item: string, place: Place | null): Promise<void> {
    if (!place) {
      await sql`delete from places where item = ${item}`.execute(trx);
      return;
    }
    await sql`insert into places (item, key, name, country)
      select id, ${place.key}, ${place.name}, ${place.country} from items where id = ${item}
      on conflict (item) do update set key = excluded.key, name = excluded.name, country = excluded.country`.execute(
      trx,
    );
  }

  /** A model's summary of the item (the latest replaces the last); none for an item that is gone. */
  @On(ItemUnderstood)
  async itemUnderstood(trx: Trx, { data }: EventOf<typeof ItemUnderstood>): Promise<void> {
    if (data.task !== 'summary' || data.summary === undefined) return;
    await sql`insert into summaries (item, summary, made_by)
      select id, ${data.summary}, ${makerString(data.made_by)} from items where id = ${data.item_id}
      on conflict (item) do update set summary = excluded.summary, made_by = excluded.made_by`.execute(trx);
  }
}

type Logged<E> = { seq: number; event: E };

/** Consecutive new items and notes, by id, projected together. */
class Run {
  readonly items = new Map<string, Logged<ItemIngestedEvent>>();
  readonly notes = new Map<string, Logged<EventOf<typeof NotePut>>>();

  has(id: string): boolean {
    return this.items.has(id) || this.notes.has(id);
  }
}

type ItemRow = Insertable<IngestDatabase['items']>;

/** What a new version of a note or an item replaces (never its id, nor when it first entered). */
const NOTE_REVISED = ['title', 'text', 'labels', 'occurred_at', 'made_by_kind', 'made_by_id', 'seq'] as const;
const ITEM_REVISED = [
  ...NOTE_REVISED,
  'kind',
  'spam',
  'source_kind',
  'source_id',
  'external_id',
  'meta',
  'origin',
  'identity',
  'content_type',
  'content_sha256',
  'text_sha256',
  'size',
  'revision',
  'parent_id',
  'location',
  // New content was read, so the location answered.
  'unreachable_since',
  'unreachable_why',
  'batch',
] as const;

/** `col = excluded.col` for each column: the row being inserted wins. */
function excluded(columns: readonly (keyof ItemRow & string)[]): Record<string, unknown> {
  return Object.fromEntries(columns.map((column) => [column, sql.ref(`excluded.${column}`)]));
}

function noteRow({ seq, event }: Logged<EventOf<typeof NotePut>>): ItemRow {
  const { id, title, body } = event.data;
  return {
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
}

function itemRow({ seq, event }: Logged<ItemIngestedEvent>, text: string): ItemRow {
  const data = event.data;
  return {
    id: data.id,
    kind: data.kind,
    title: data.title,
    text,
    labels: event.labels,
    spam: event.spam ?? false,
    source_kind: data.source.kind,
    source_id: data.source.id,
    external_id: data.external_id,
    // An undated item (no plausible date of its own) has no time in the world: never "recent".
    occurred_at: data.meta.undated ? null : new Date(event.occurred_at),
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
    location: data.location ?? null,
    unreachable_since: null,
    unreachable_why: null,
    batch: event.correlation_id ?? null,
  };
}

/** Items whose location is `prefix`, or lies under it when it ends with `/` (libs/locations isWithin). */
function locatedUnder(prefix: string) {
  if (!prefix.endsWith('/')) return sql<boolean>`location = ${prefix}`;
  const pattern = prefix.replace(/[\\%_]/g, (c) => `\\${c}`) + '%';
  return sql<boolean>`location like ${pattern}`;
}
