import { sql } from 'kysely';
import type { Migration } from '@memex/db';

export const searchMigrations: Migration[] = [
  {
    name: '001_search',
    async up(db) {
      await db.schema
        .createTable('items')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('labels', sql`text[]`, (c) => c.notNull())
        .addColumn('spam', 'boolean', (c) => c.notNull())
        .addColumn('source_kind', 'text', (c) => c.notNull())
        .addColumn('source_id', 'text', (c) => c.notNull())
        .addColumn('people_from', 'text', (c) => c.notNull())
        .addColumn('people_to', 'text', (c) => c.notNull())
        .addColumn('occurred_at', 'timestamptz')
        .addColumn('revision', 'bigint', (c) => c.notNull())
        .addColumn('parts_revision', 'bigint')
        .addColumn('parts_pipeline', 'text')
        .addColumn('has_text', 'boolean', (c) => c.notNull().defaultTo(false))
        .addColumn('title_tsv', sql`tsvector`, (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .execute();
      await sql`create index items_title_tsv on items using gin (title_tsv)`.execute(db);
      await sql`create index items_people_from on items using gin (people_from gin_trgm_ops)`.execute(db);
      await sql`create index items_people_to on items using gin (people_to gin_trgm_ops)`.execute(db);
      await sql`create index items_occurred on items (occurred_at desc nulls last)`.execute(db);
      await sql`create index items_labels on items using gin (labels)`.execute(db);

      await db.schema
        .createTable('parts')
        .addColumn('item_id', 'text', (c) => c.notNull())
        .addColumn('ordinal', 'integer', (c) => c.notNull())
        .addColumn('part_kind', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('labels', sql`text[]`, (c) => c.notNull())
        .addColumn('spam', 'boolean', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('start_offset', 'integer', (c) => c.notNull())
        .addColumn('end_offset', 'integer', (c) => c.notNull())
        .addColumn('page', 'integer')
        .addColumn('tsv', sql`tsvector`, (c) => c.notNull())
        .addPrimaryKeyConstraint('parts_pk', ['item_id', 'ordinal'])
        .execute();
      await sql`create index parts_tsv on parts using gin (tsv)`.execute(db);

      await db.schema
        .createTable('words')
        .addColumn('word', 'text', (c) => c.primaryKey())
        .addColumn('uses', 'integer', (c) => c.notNull())
        .execute();
      await sql`create index words_trgm on words using gin (word gin_trgm_ops)`.execute(db);
      await sql`create index words_prefix on words (word text_pattern_ops)`.execute(db);

      await db.schema
        .createTable('spaces')
        .addColumn('space', 'text', (c) => c.primaryKey())
        .addColumn('ord', 'integer', (c) => c.notNull().unique())
        .addColumn('dims', 'integer', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('spec', 'text', (c) => c.notNull())
        .addColumn('name', 'text')
        .addColumn('model', 'text')
        .addColumn('protocol', 'text')
        .addColumn('details', 'jsonb', (c) => c.notNull())
        .addColumn('added_seq', 'bigint', (c) => c.notNull())
        .addColumn('embedded_items', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createTable('embedded')
        .addColumn('item_id', 'text', (c) => c.notNull())
        .addColumn('ord', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('embedded_pk', ['item_id', 'ord'])
        .execute();
      await db.schema
        .createTable('state')
        .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
        .addColumn('chosen', 'text')
        .addColumn('active', 'text')
        .addColumn('text_items', 'integer', (c) => c.notNull())
        .execute();
      await db.insertInto('state').values({ id: 1, chosen: null, active: null, text_items: 0 }).execute();
      await db.schema
        .createTable('tombstones')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  {
    // Counting word uses in the trigram-indexed table rewrote its index entries for every passage;
    // the counts move to a narrow table whose updates touch no index (HOT), and `words` only sees
    // a word arrive and go. The labels index served no query.
    name: '002_word_uses',
    async up(db) {
      await sql`create table word_uses (word text primary key, uses integer not null) with (fillfactor = 70)`.execute(
        db,
      );
      await sql`insert into word_uses (word, uses) select word, uses from words`.execute(db);
      await sql`alter table words drop column uses`.execute(db);
      await sql`drop index items_labels`.execute(db);
    },
  },
];
