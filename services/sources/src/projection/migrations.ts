import { sql } from 'kysely';
import type { Migration } from '@memex/db';

export const sourcesMigrations: Migration[] = [
  {
    name: '001_sources_and_files',
    async up(db) {
      await db.schema
        .createTable('sources')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('root', 'text', (c) => c.notNull())
        .addColumn('settings', 'jsonb', (c) => c.notNull())
        .addColumn('paused', 'boolean', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('unreachable_since', 'timestamptz')
        .addColumn('unreachable_why', 'text')
        .addColumn('last_scan', 'jsonb')
        .addColumn('added_at', 'timestamptz', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('files')
        .addColumn('source_id', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('item_id', 'text')
        .addColumn('external_id', 'text')
        .addColumn('sha256', 'text')
        .addColumn('in_place', 'boolean', (c) => c.notNull())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('modified_at', 'timestamptz', (c) => c.notNull())
        .addColumn('rejected', 'text')
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('files_pk', ['source_id', 'path'])
        .execute();
      await db.schema
        .createIndex('files_item')
        .on('files')
        .column('item_id')
        .where(sql.ref('item_id'), 'is not', null)
        .execute();
    },
  },
  {
    // The items located on workers, so their counts (and the work waiting for them) are known
    // from the read model at start, not from the next heartbeat. Filled from item.ingested: an
    // existing memex gets its workers' earlier items with `memex replay sources`.
    name: '002_worker_items',
    async up(db) {
      await db.schema
        .createTable('worker_items')
        .addColumn('item_id', 'text', (c) => c.primaryKey())
        .addColumn('worker', 'text', (c) => c.notNull())
        .addColumn('location', 'text', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('worker_items_worker').on('worker_items').column('worker').execute();
    },
  },
  {
    // An mbox of a watched folder (source.mailbox_read): its messages are rows of their own at
    // `<mbox path>#<message id>`; this row is the file, its size and time.
    name: '003_mailboxes',
    async up(db) {
      await db.schema
        .alterTable('files')
        .addColumn('mailbox', 'boolean', (c) => c.notNull().defaultTo(false))
        .execute();
    },
  },
  {
    // Where an mbox that has only grown is read on from (source.mailbox_read's tail).
    name: '004_mailbox_tails',
    async up(db) {
      await db.schema.alterTable('files').addColumn('mbox_tail', 'jsonb').execute();
    },
  },
  {
    // Since when a file that went keeps its item (source.file_leaving).
    name: '005_leaving',
    async up(db) {
      await db.schema.alterTable('files').addColumn('leaving_since', 'timestamptz').execute();
    },
  },
  {
    // A zip or an Evernote export read as its members (source.archive_read): which it is, and
    // what of it was passed over, counted by every whole scan while it stays unchanged.
    name: '006_archives',
    async up(db) {
      await db.schema
        .alterTable('files')
        .addColumn('archive', 'text')
        .addColumn('archive_passed_over', 'jsonb')
        .execute();
    },
  },
];
