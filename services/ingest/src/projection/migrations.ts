import { sql } from 'kysely';
import type { Migration } from '@memex/db';

export const ingestMigrations: Migration[] = [
  {
    name: '001_items',
    async up(db) {
      await db.schema
        .createTable('items')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('labels', sql`text[]`, (c) => c.notNull())
        .addColumn('spam', 'boolean', (c) => c.notNull().defaultTo(false))
        .addColumn('source_kind', 'text', (c) => c.notNull())
        .addColumn('source_id', 'text', (c) => c.notNull())
        .addColumn('external_id', 'text')
        .addColumn('occurred_at', 'timestamptz')
        .addColumn('added_at', 'timestamptz', (c) => c.notNull())
        .addColumn('made_by_kind', 'text', (c) => c.notNull())
        .addColumn('made_by_id', 'text', (c) => c.notNull())
        .addColumn('meta', 'jsonb', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('items_kind_time').on('items').columns(['kind', 'occurred_at']).execute();
      await db.schema
        .createTable('tombstones')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  {
    name: '002_ingested_items_and_mail',
    async up(db) {
      await db.schema
        .alterTable('items')
        .addColumn('origin', 'text')
        .addColumn('identity', 'text')
        .addColumn('content_type', 'text')
        .addColumn('content_sha256', 'text')
        .addColumn('text_sha256', 'text')
        .addColumn('size', 'bigint')
        .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('parent_id', 'text')
        .execute();
      await db.schema
        .createIndex('items_parent')
        .on('items')
        .column('parent_id')
        .where(sql.ref('parent_id'), 'is not', null)
        .execute();
      // Deletion keeps a blob another item still names.
      await db.schema.createIndex('items_content_blob').on('items').column('content_sha256').execute();
      await db.schema.createIndex('items_text_blob').on('items').column('text_sha256').execute();
      await db.schema
        .createTable('identities')
        .addColumn('key_hash', 'text', (c) => c.primaryKey())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('item_id', 'text', (c) => c.notNull())
        .addColumn('claimed_at', 'timestamptz', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('identities_item').on('identities').column('item_id').execute();
      await db.schema
        .createTable('messages')
        .addColumn('item_id', 'text', (c) => c.primaryKey())
        .addColumn('account', 'text', (c) => c.notNull())
        .addColumn('origin', 'text', (c) => c.notNull())
        .addColumn('thread_key', 'text', (c) => c.notNull())
        .addColumn('message_id', 'text')
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('from', 'jsonb', (c) => c.notNull())
        .addColumn('to', 'jsonb', (c) => c.notNull())
        .addColumn('cc', 'jsonb', (c) => c.notNull())
        .addColumn('date', 'timestamptz', (c) => c.notNull())
        .addColumn('snippet', 'text', (c) => c.notNull())
        .addColumn('mail_labels', sql`text[]`, (c) => c.notNull())
        .addColumn('read', 'boolean', (c) => c.notNull())
        .addColumn('starred', 'boolean', (c) => c.notNull())
        .addColumn('inbox', 'boolean', (c) => c.notNull())
        .addColumn('trashed', 'boolean', (c) => c.notNull())
        .addColumn('attachments', 'integer', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('labels', sql`text[]`, (c) => c.notNull())
        .addColumn('spam', 'boolean', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .execute();
      // Newest first with a stable tie-break: the order of every view and its cursor.
      await db.schema.createIndex('messages_date').on('messages').columns(['date desc', 'item_id desc']).execute();
      await db.schema.createIndex('messages_thread').on('messages').columns(['thread_key', 'date']).execute();
      await db.schema.createIndex('messages_account').on('messages').columns(['account', 'date desc']).execute();
      await db.schema.createIndex('messages_labels').on('messages').using('gin').column('mail_labels').execute();
    },
  },
  {
    // Known items are found on their own rows (by source + external_id, and by identity: the
    // Message-ID or content hash), so the projected copy of the identity claims goes.
    name: '003_items_by_identity',
    async up(db) {
      await db.schema.dropTable('identities').execute();
      await db.schema
        .createIndex('items_source_key')
        .on('items')
        .columns(['source_kind', 'source_id', 'external_id'])
        .execute();
      await db.schema.createIndex('items_identity').on('items').column('identity').execute();
    },
  },
  {
    // Threads as connected components of the ids messages name (mail/threads.ts).
    name: '004_thread_ids',
    async up(db) {
      await db.schema
        .createTable('thread_ids')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('thread_key', 'text', (c) => c.notNull())
        .addColumn('first_seq', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('thread_ids_key').on('thread_ids').column('thread_key').execute();
    },
  },
  {
    // Items read in place (docs/sources.md): where their bytes live and whether they can be read.
    name: '005_item_locations',
    async up(db) {
      await db.schema
        .alterTable('items')
        .addColumn('location', 'text')
        .addColumn('unreachable_since', 'timestamptz')
        .addColumn('unreachable_why', 'text')
        .execute();
      // location.unreachable marks every item under a folder: a prefix scan (text_pattern_ops).
      await sql`create index items_location on items (location text_pattern_ops) where location is not null`.execute(
        db,
      );
    },
  },
  {
    // Tier 2's summary of an item (item.understood, task summary), shown by memex.items.get; it
    // goes with the item.
    name: '006_item_summaries',
    async up(db) {
      await sql`create table summaries (
        item text primary key references items (id) on delete cascade,
        summary text not null,
        made_by text not null
      )`.execute(db);
    },
  },
  {
    // Where a photo or video was taken, as media placed it (photo.analyzed / video.analyzed), shown
    // by memex.items.get; it goes with the item.
    name: '007_item_places',
    async up(db) {
      await sql`create table places (
        item text primary key references items (id) on delete cascade,
        key text not null,
        name text not null,
        country text not null
      )`.execute(db);
    },
  },
  {
    // The thread keys thread.joined joined into another, as the log says (commands/thread-joins.ts
    // publishes a join only when a key is not yet where its thread now is).
    name: '008_thread_joined',
    async up(db) {
      await sql`create table thread_joined (merged text primary key, key text not null)`.execute(db);
    },
  },
  {
    // The batch a sender sent an item's last version in (memex.ingest `batch`, the event's
    // correlation_id): the same batch sent again is answered as the first send was.
    name: '009_items_batch',
    async up(db) {
      await sql`alter table items add column batch text`.execute(db);
    },
  },
  {
    // No statistics for columns only ever read whole or through expressions (which have none of
    // theirs): sorting a sample of their values to tell the planner nothing was two fifths of
    // analyzing items and half of messages (PlannerStatistics analyzes them as they grow: a fifth
    // of Postgres' time in a replay of ingest; docs/replay.md).
    name: '010_no_statistics_for_opaque_columns',
    async up(db) {
      await sql`alter table items alter column meta set statistics 0, alter column text set statistics 0`.execute(db);
      await sql`alter table messages alter column "from" set statistics 0, alter column "to" set statistics 0,
        alter column cc set statistics 0`.execute(db);
    },
  },
  {
    // A rebuild's bulk load stages its messages' thread ids here, in two lanes at once, and joins
    // them once after (see ItemsProjector.bulkLanes); empty otherwise. Unlogged: a rebuild that
    // crashes starts again.
    name: '011_bulk_thread_ids',
    async up(db) {
      await sql`create unlogged table thread_ids_bulk (seq bigint not null, item_id text not null, ids jsonb not null)`.execute(
        db,
      );
    },
  },
];
