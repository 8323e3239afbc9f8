import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createDatabase, migrate } from '@memex/db';
import { createTestEnv, type TestEnv } from '@memex/testing';
import { searchMigrations } from './projection/migrations.js';

describe('search migrations', () => {
  let env: TestEnv;
  before(async () => {
    env = await createTestEnv();
  });
  after(async () => {
    await env.stop();
  });

  test('011 gives titles that hold a file name the words the projector now writes, and leaves the rest', async () => {
    const schema = 'search_before_name_words';
    const db = createDatabase<unknown>(env.config.databaseUrl, { schema, max: 1 });
    try {
      const upTo011 = searchMigrations.findIndex((migration) => migration.name === '011_file_name_words');
      await migrate(db, schema, searchMigrations.slice(0, upTo011));
      // Rows as the version before wrote them: a title's words without its file name's parts.
      for (const [id, title] of [
        ['named', 'meeting-notes_2023.docx'],
        ['plain', 'Quarterly budget'],
      ]) {
        await sql`insert into items (id, kind, title, labels, spam, source_kind, source_id, people_from, people_to, revision, title_tsv, seq)
          values (${id}, 'document', ${title}, '{}', false, 'import', 'docs', 'Ann <ann@example.com>', '', 1,
            doc_tsv(${title}::text, 'A') || doc_tsv(people_words('Ann <ann@example.com>' || E'\\n' || ''), 'C'), 1)`.execute(
          db,
        );
        await sql`insert into parts (item_id, ordinal, part_kind, kind, labels, spam, text, start_offset, end_offset, tsv)
          values (${id}, 0, 'body', 'document', '{}', false, 'Agenda and minutes', 0, 18,
            doc_tsv(${title}::text, 'A') || doc_tsv('Agenda and minutes', 'B'))`.execute(db);
      }
      const before = await sql<{
        id: string;
        title_tsv: string;
      }>`select id, title_tsv::text from items order by id`.execute(db);

      assert.deepEqual(await migrate(db, schema, searchMigrations.slice(0, upTo011 + 1)), ['011_file_name_words']);
      const { rows } = await sql<{ id: string; title_tsv: string; tsv: string }>`
        select i.id, i.title_tsv::text, p.tsv::text from items i join parts p on p.item_id = i.id order by i.id`.execute(
        db,
      );
      // What the projector wrote when 011 was made (domain/text.ts titleTsv and partTsv): the name's parts too.
      assert.deepEqual(rows[0], {
        id: 'named',
        title_tsv:
          "'2023':5A 'ann':7C,9C,10C 'ann@example.com':8C 'com':12C 'docx':6A 'exampl':11C 'example.com':13C 'meet':3A 'meeting-not':2A 'meeting-notes_2023.docx':1A 'note':4A",
        tsv: "'2023':5A 'agenda':7B 'ann':10C,12C,13C 'ann@example.com':11C 'com':15C 'docx':6A 'exampl':14C 'example.com':16C 'meet':3A 'meeting-not':2A 'meeting-notes_2023.docx':1A 'minut':9B 'note':4A",
      });
      // A title without a file name is not written again.
      assert.deepEqual(rows[1]!.title_tsv, before.rows[1]!.title_tsv);
    } finally {
      await sql`drop schema ${sql.id(schema)} cascade`.execute(db);
    }
  });

  test('009 replaces every HNSW graph, a segment’s too, by an IVFFlat index with lists for its rows', async () => {
    const schema = 'search_before_ivfflat';
    const db = createDatabase<unknown>(env.config.databaseUrl, { schema, max: 1 });
    try {
      const upTo009 = searchMigrations.findIndex((migration) => migration.name === '009_ivfflat_indexes');
      await migrate(db, schema, searchMigrations.slice(0, upTo009));
      // A space as the version before left it: its tables and a segment, each with its graph.
      const vector = sql`array[sin(n), cos(n), sin(n * 7)]::halfvec(3)`;
      await sql`create table vec_0_parts (item_id text not null, ordinal integer not null, embedding halfvec(3) not null, primary key (item_id, ordinal));
        create table vec_0_items (item_id text primary key, embedding halfvec(3) not null);
        create table vec_0_parts_seg1 () inherits (vec_0_parts);
        create table vec_0_items_seg1 () inherits (vec_0_items)`.execute(db);
      // Main tables past what a query reads whole (14,400 rows: below, one list whatever the rows).
      await sql`insert into vec_0_parts select 'i' || n, 0, ${vector} from generate_series(1, 15000) n`.execute(db);
      await sql`insert into vec_0_items select 'i' || n, ${vector} from generate_series(1, 15000) n`.execute(db);
      await sql`insert into vec_0_parts_seg1 select 's' || n, 0, ${vector} from generate_series(1, 900) n`.execute(db);
      await sql`insert into vec_0_items_seg1 select 's' || n, ${vector} from generate_series(1, 9) n`.execute(db);
      // A table whose index 006 built when it ran with this version (an archive upgraded from before 006).
      await sql`create index vec_0_items_ann on vec_0_items using ivfflat (embedding halfvec_cosine_ops) with (lists = 1)`.execute(
        db,
      );
      for (const table of ['vec_0_parts', 'vec_0_parts_seg1', 'vec_0_items_seg1'])
        await sql`create index ${sql.id(`${table}_hnsw`)} on ${sql.table(table)} using hnsw (embedding halfvec_cosine_ops)`.execute(
          db,
        );

      assert.deepEqual(await migrate(db, schema, searchMigrations.slice(0, upTo009 + 1)), ['009_ivfflat_indexes']);
      const { rows } = await sql<{ name: string; method: string; options: string[] | null }>`
        select c.relname as name, am.amname as method, c.reloptions as options
        from pg_index i join pg_class c on c.oid = i.indexrelid join pg_am am on am.oid = c.relam
        join pg_namespace s on s.oid = c.relnamespace
        where s.nspname = ${schema} and c.relname like 'vec\\_0\\_%' and not i.indisprimary order by 1`.execute(db);
      assert.deepEqual(
        rows.map((row) => `${row.name} ${row.method} ${row.options?.join(',')}`),
        [
          'vec_0_items_ann ivfflat lists=122',
          'vec_0_items_seg1_ann ivfflat lists=1',
          'vec_0_parts_ann ivfflat lists=122',
          'vec_0_parts_seg1_ann ivfflat lists=1',
        ],
        'the main tables’ lists count their own rows, not their segments’',
      );
    } finally {
      await sql`drop schema ${sql.id(schema)} cascade`.execute(db);
      await db.destroy();
    }
  });
});
