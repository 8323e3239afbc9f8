import { sql } from 'kysely';
import type { Migration } from '@memex/db';
import { createAnnIndex, createFreshTables, createVectorIndexes, vectorTables } from './vectors.js';
import { countWords } from './vocabulary.js';

/** A run of Han, kana (full and half width) or Hangul characters. */
const CJK_RUN = sql.lit(
  '[\\u3040-\\u30ff\\u3400-\\u4dbf\\u4e00-\\u9fff\\uf900-\\ufaff\\uff66-\\uff9f\\uac00-\\ud7af]+',
);

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
      await sql`insert into state (id, chosen, active, text_items) values (1, null, null, 0)`.execute(db);
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
  {
    // People findable by name and address, accents folded, CJK text found inside longer runs
    // (see domain/text.ts); every stored tsvector is recomputed the way the projector now writes it.
    name: '003_people_accents_cjk',
    async up(db) {
      await sql`create extension if not exists unaccent with schema public`.execute(db);
      await sql`create text search configuration memex (copy = english)`.execute(db);
      await sql`alter text search configuration memex
        alter mapping for hword, hword_part, word with unaccent, english_stem`.execute(db);
      // Each CJK run's overlapping bigrams in order (a query's bigrams match as a phrase), then,
      // apart from them, its single characters (a one-character query).
      await sql`create function cjk_grams(t text, unigrams boolean default true) returns text
        language sql immutable parallel safe as $$
          select coalesce(string_agg(g, ' ' order by pass, run, i), '')
          from regexp_matches(t, ${CJK_RUN}, 'g') with ordinality as r (m, run),
            lateral (select 1 as pass, i, substr(m[1], i, 2) as g from generate_series(1, length(m[1]) - 1) i
                     union all
                     select 2, i, substr(m[1], i, 1) from generate_series(1, length(m[1])) i
                     where unigrams or length(m[1]) = 1) x
        $$`.execute(db);
      await sql`create function doc_tsv(t text, weight "char") returns tsvector
        language sql stable parallel safe as $$
          select setweight(to_tsvector('memex', t || ' ' || cjk_grams(t)), weight)
        $$`.execute(db);
      await sql`create function people_words(lines text) returns text
        language sql immutable parallel safe as $$
          select lines || ' ' || regexp_replace(lines, '[^[:alnum:]]+', ' ', 'g') || ' '
            || coalesce((select string_agg(m[1], ' ') from regexp_matches(lines, '@([^\\s>]+)', 'g') m), '')
        $$`.execute(db);
      await sql`create function word_query(w text) returns tsquery
        language sql stable parallel safe as $$
          select case when w ~ ${CJK_RUN} then phraseto_tsquery('memex', cjk_grams(w, false))
                      else plainto_tsquery('memex', w) end
        $$`.execute(db);
      // Written out as the words were then: a migration must not change with today's helpers (text.ts).
      await sql`update items set title_tsv = doc_tsv(title, 'A')
        || doc_tsv(people_words(people_from::text || E'\\n' || people_to::text), 'C')`.execute(db);
      await sql`update parts p set tsv = doc_tsv(i.title, 'A') || doc_tsv(p.text, 'B')
        || doc_tsv(people_words(i.people_from::text || E'\\n' || i.people_to::text), 'C')
        from items i where i.id = p.item_id`.execute(db);
    },
  },
  {
    // What media saw in a photo or video (object:dog, tag:beach): the object:/tag: filters.
    name: '004_media_tags',
    async up(db) {
      await sql`alter table items add column tags text[] not null default '{}'`.execute(db);
      await sql`create index items_tags on items using gin (tags)`.execute(db);
    },
  },
  {
    // The projector now finds a text's words itself (vocabulary.ts) instead of by a regular
    // expression in SQL, which may split rare letters otherwise: the counts are taken again its
    // way, so what a deletion removes is what was added.
    name: '005_vocabulary_counted_by_projector',
    async up(db) {
      const counts = new Map<string, number>();
      const count = (texts: string[]) => {
        for (const [word, n] of countWords(texts)) counts.set(word, (counts.get(word) ?? 0) + n);
      };
      for (let after = ''; ;) {
        const { rows } = await sql<{ id: string; title: string }>`select id, title from items where id > ${after}
          order by id limit ${PAGE}`.execute(db);
        count(rows.map((row) => row.title));
        if (rows.length < PAGE) break;
        after = rows[rows.length - 1]!.id;
      }
      for (let after = { item_id: '', ordinal: -1 }; ;) {
        const { rows } = await sql<{ item_id: string; ordinal: number; text: string }>`select item_id, ordinal, text
          from parts where (item_id, ordinal) > (${after.item_id}, ${after.ordinal}) order by item_id, ordinal limit ${PAGE}`.execute(
          db,
        );
        count(rows.map((row) => row.text));
        if (rows.length < PAGE) break;
        after = rows[rows.length - 1]!;
      }
      await sql`delete from word_uses`.execute(db);
      await sql`delete from words`.execute(db);
      const all = [...counts];
      for (let i = 0; i < all.length; i += PAGE) {
        const page = all.slice(i, i + PAGE);
        await sql`with u as (insert into word_uses (word, uses)
            select * from unnest(${page.map(([word]) => word)}::text[], ${page.map(([, n]) => n)}::int[]) returning word)
          insert into words (word) select word from u`.execute(db);
      }
    },
  },
  {
    // Search at scale:
    // - each space's HNSW graphs built again denser (the default graph missed a seventh of the
    //   exact nearest ten; createVectorIndexes has built IVFFlat indexes since 009);
    // - the titles of items with no passages indexed apart, so the title-only branch reads those
    //   items alone, not every item whose title holds a common word;
    // - a passage row (text ~1.3 KB and tsvector ~1.7 KB) kept whole in its page up to 4 KB:
    //   past the default 2 KB the tsvector went to TOAST, and matching and ranking a common
    //   word's passages fetched each one from there. Rows written from now on (a replay rewrites
    //   them all).
    name: '006_denser_hnsw_textless_titles_inline_passages',
    async up(db) {
      await sql`set local maintenance_work_mem = '512MB'`.execute(db);
      const spaces = await sql<{ ord: number }>`select ord from spaces order by ord`.execute(db);
      for (const { ord } of spaces.rows) {
        for (const table of Object.values(vectorTables(ord)))
          await sql`drop index if exists ${sql.id(`${table}_hnsw`)}`.execute(db);
        await createVectorIndexes(db, ord);
      }
      await sql`create index items_textless_title_tsv on items using gin (title_tsv) where not has_text`.execute(db);
      await sql`alter table parts set (toast_tuple_target = 4080)`.execute(db);
    },
  },
  {
    // Live vectors wait outside the HNSW graphs (see freshTables): each space's fresh tables.
    name: '007_fresh_vectors',
    async up(db) {
      const spaces = await sql<{ ord: number; dims: number }>`select ord, dims from spaces order by ord`.execute(db);
      for (const { ord, dims } of spaces.rows) await createFreshTables(db, ord, dims);
    },
  },
  {
    // A text without a CJK character is not searched for CJK runs, the same tsvector for less: the
    // search was about a tenth of a passage's tsvector (5,000 texts of 1.5 KB: 429 -> 378 ms).
    name: '008_doc_tsv_cjk_when_present',
    async up(db) {
      await sql`create or replace function doc_tsv(t text, weight "char") returns tsvector
        language sql stable parallel safe as $$
          select setweight(to_tsvector('memex', case when t ~ ${CJK_RUN} then t || ' ' || cjk_grams(t) else t end), weight)
        $$`.execute(db);
    },
  },
  {
    // ANN indexes are IVFFlat, not HNSW graphs (see listsFor): built in seconds rather than
    // minutes, read faster at the same recall. Every indexed table's graph (a space's main tables
    // and its segments) is replaced by an index with lists for the rows it holds. A schema that
    // ran 006 only now has its main tables' IVFFlat indexes already: built again, the same way.
    name: '009_ivfflat_indexes',
    async up(db) {
      const { rows } = await sql<{ name: string }>`select tablename as name from pg_tables
        where schemaname = current_schema() and tablename ~ '^vec_[0-9]+_(parts|items)(_seg[0-9]+)?$'`.execute(db);
      for (const { name } of rows) {
        await sql`drop index if exists ${sql.id(`${name}_hnsw`)}`.execute(db);
        await sql`drop index if exists ${sql.id(`${name}_ann`)}`.execute(db);
        await createAnnIndex(db, name, { concurrently: false });
      }
    },
  },
  {
    // A rebuild's bulk load stages its word counts here, in two lanes at once, and sums them once
    // after (see SearchProjector.bulkLanes); empty otherwise. Unlogged: a rebuild that crashes starts again.
    name: '010_bulk_word_delta',
    async up(db) {
      await sql`create unlogged table word_delta_bulk (w text not null, n int not null)`.execute(db);
    },
  },
  {
    // A file name is one word to Postgres' parser (`meeting-notes.docx`, `IMG_5195.HEIC`: a host
    // name to it), so "meeting notes" or "IMG_5195" never found the document or photo titled by it.
    // A title holding such a name also gives its parts (see domain/text.ts); titles that hold one
    // get their words again.
    name: '011_file_name_words',
    async up(db) {
      await sql`create function name_words(t text) returns text
        language sql immutable parallel safe as $$
          select case when t ~ ${NAME_JOINER} then t || ' ' || regexp_replace(t, '[._]+', ' ', 'g') else t end
        $$`.execute(db);
      // Written out as the words are now, as 003 is: a migration must not change with later helpers.
      await sql`update items set title_tsv = doc_tsv(name_words(title), 'A')
        || doc_tsv(people_words(people_from::text || E'\\n' || people_to::text), 'C')
        where title ~ ${NAME_JOINER}`.execute(db);
      await sql`update parts p set tsv = doc_tsv(name_words(i.title), 'A') || doc_tsv(p.text, 'B')
        || doc_tsv(people_words(i.people_from::text || E'\\n' || i.people_to::text), 'C')
        from items i where i.id = p.item_id and i.title ~ ${NAME_JOINER}`.execute(db);
    },
  },
];

/** A dot or underscore between letters or digits: what joins a file name's words into one token. */
const NAME_JOINER = sql.lit('[[:alnum:]][._]+[[:alnum:]]');

/** Rows read or written per statement by a migration that goes through a whole table. */
const PAGE = 5000;
