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
];
