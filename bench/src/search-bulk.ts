import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { createDatabase } from '@memex/db';
import { defaultProvider } from '@memex/embeddings';
import { splitPassages } from '@memex/pipelines';
import { countWords, createAnnIndex, partTsv, titleTsv, withSpaceLock } from '@memex/search/testing';
import { findPostgresBinaries } from '@memex/stack';

/** A mail for the search read model: its people as the projector keeps them (`name <address>` lines, lowercased). */
export interface BulkMail {
  id: string;
  title: string;
  text: string;
  occurred_at: string;
  from: string;
  to: string;
}

export interface BulkLoaded {
  items: number;
  passages: number;
  /** Seconds spent splitting and embedding (in this process). */
  generated: number;
  /** Seconds spent copying into the tables and building their indexes. */
  loaded: number;
}

const csv = (value: string | number) => `"${String(value).replace(/"/g, '""')}"`;

/**
 * Fills search's read model in the database at `databaseUrl` with the mails `next` hands out
 * (a batch each call, until it returns nothing), at a size the pipeline would take hours to reach
 * on this machine: passages split by tier 1's own splitter and embedded by the built-in model in
 * this process, written with COPY, indexes built after the load (as a bulk load should). Rows as
 * the projector builds them: its tsvectors (`titleTsv`, `partTsv`) and its vocabulary's counts
 * (`countWords`). One item must have gone through the whole pipeline first, which creates the
 * space and its tables; the live search service then answers queries over the rows.
 */
export async function bulkLoadSearch(
  databaseUrl: string,
  next: (sofar: { items: number; passages: number }) => BulkMail[] | undefined,
): Promise<BulkLoaded> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-bench-search-'));
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const db = createDatabase<unknown>(databaseUrl, { schema: 'search', max: 2 });
  try {
    const started = performance.now();
    const provider = await defaultProvider();
    const files = {
      items: path.join(dir, 'items.csv'),
      parts: path.join(dir, 'parts.csv'),
      vparts: path.join(dir, 'vparts.csv'),
      vitems: path.join(dir, 'vitems.csv'),
    };
    let passages = 0;
    let items = 0;
    const vocabulary = new Map<string, number>();
    const count = (texts: string[]) => {
      for (const [word, n] of countWords(texts)) vocabulary.set(word, (vocabulary.get(word) ?? 0) + n);
    };
    for (let batch = next({ items, passages }); batch?.length; batch = next({ items, passages })) {
      const split = batch.map((item) => splitPassages(item.text));
      count([...batch.map((item) => item.title), ...split.flat().map((p) => p.text)]);
      const vectors = await provider.embed(
        batch.flatMap((item, j) => split[j]!.map((p) => `${item.title}\n${p.text}`)),
      );
      const out = { items: '', parts: '', vparts: '', vitems: '' };
      let v = 0;
      batch.forEach((item, j) => {
        const people = `${csv(item.from)},${csv(item.to)}`;
        out.items += `${csv(item.id)},${csv(item.title)},${csv(item.occurred_at)},${people}\n`;
        const own: Float32Array[] = [];
        for (const p of split[j]!) {
          const vector = vectors[v++]!;
          own.push(vector);
          out.parts += `${csv(item.id)},${p.ordinal},${csv(item.title)},${csv(p.text)},${p.start},${p.end},${people}\n`;
          out.vparts += `${csv(item.id)},${p.ordinal},${csv(`[${Array.from(vector).join(',')}]`)}\n`;
        }
        const mean = own.reduce((sum, x) => sum.map((value, d) => value + x[d]!), new Float32Array(provider.dims));
        const norm = Math.hypot(...mean) || 1;
        out.vitems += `${csv(item.id)},${csv(`[${Array.from(mean, (x) => x / norm).join(',')}]`)}\n`;
        passages += split[j]!.length;
      });
      for (const [name, text] of Object.entries(out)) fs.appendFileSync(files[name as keyof typeof files], text);
      items += batch.length;
    }
    const generated = (performance.now() - started) / 1000;

    const loading = performance.now();
    // The live service's mover builds an ANN index it finds missing: it is kept out (the lock on
    // the space's indexes it takes for each look) while the load has them dropped.
    const indexes = db as unknown as Parameters<typeof withSpaceLock>[0];
    while (
      !(await withSpaceLock(indexes, 0, 'indexes', () => copyIn(client, db, databaseUrl, files, vocabulary, items)))
    )
      await new Promise((resolve) => setTimeout(resolve, 200));
    return { items, passages, generated, loaded: (performance.now() - loading) / 1000 };
  } finally {
    await db.destroy();
    await client.end();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Copies the generated rows into search's tables, their secondary indexes dropped and built again after. */
async function copyIn(
  client: pg.Client,
  db: ReturnType<typeof createDatabase<unknown>>,
  databaseUrl: string,
  files: Record<'items' | 'parts' | 'vparts' | 'vitems', string>,
  vocabulary: Map<string, number>,
  items: number,
): Promise<void> {
  const psql = path.join(findPostgresBinaries().bindir, 'psql');
  const copy = (command: string) =>
    execFileSync(psql, [databaseUrl, '-v', 'ON_ERROR_STOP=1', '-c', command], { stdio: 'pipe' });
  const { rows: indexes } = await client.query<{ indexname: string; tablename: string; indexdef: string }>(
    `select indexname, tablename, indexdef from pg_indexes where schemaname = 'search' and tablename in ('items', 'parts', 'vec_0_parts', 'vec_0_items')
         and indexdef not like '%UNIQUE%'`,
  );
  for (const index of indexes) await client.query(`drop index search."${index.indexname}"`);
  await client.query(`create unlogged table search.stage_items (id text, title text, occurred_at timestamptz, people_from text, people_to text);
      create unlogged table search.stage_parts (item_id text, ordinal int, title text, text text, start_offset int, end_offset int, people_from text, people_to text)`);
  copy(`\\copy search.stage_items from '${files.items}' with (format csv)`);
  copy(`\\copy search.stage_parts from '${files.parts}' with (format csv)`);
  copy(`\\copy search.vec_0_parts (item_id, ordinal, embedding) from '${files.vparts}' with (format csv)`);
  copy(`\\copy search.vec_0_items (item_id, embedding) from '${files.vitems}' with (format csv)`);
  const [from, to] = [sql.ref('people_from'), sql.ref('people_to')];
  await sql`insert into items (id, kind, title, labels, spam, source_kind, source_id, people_from, people_to,
        occurred_at, revision, parts_revision, parts_pipeline, has_text, title_tsv, seq)
      select id, 'email', title, '{}', false, 'bench', 'bulk', people_from, people_to,
        occurred_at, 1, 1, 'text@1', true, ${titleTsv(sql.ref('title'), from, to)}, 0 from stage_items`.execute(db);
  await sql`insert into parts (item_id, ordinal, part_kind, kind, labels, spam, text, start_offset, end_offset, tsv)
      select item_id, ordinal, 'passage', 'email', '{}', false, text, start_offset, end_offset,
        ${partTsv(sql.ref('title'), sql.ref('text'), from, to)} from stage_parts`.execute(db);
  // The vocabulary with the counts the projector keeps (the first item's words are there already).
  const words = [...vocabulary];
  for (let i = 0; i < words.length; i += 10_000) {
    const page = words.slice(i, i + 10_000);
    await sql`with u as (insert into word_uses (word, uses)
          select * from unnest(${page.map(([word]) => word)}::text[], ${page.map(([, n]) => n)}::int[])
          on conflict (word) do update set uses = word_uses.uses + excluded.uses returning word)
        insert into words (word) select word from u on conflict do nothing`.execute(db);
  }
  await client.query(`insert into search.embedded (item_id, ord) select id, 0 from search.stage_items;
      update search.state set text_items = text_items + ${items};
      update search.spaces set embedded_items = embedded_items + ${items} where ord = 0;
      drop table search.stage_items, search.stage_parts`);
  // Memory for the builds: GIN sorts its entries there, pgvector keeps its k-means sample.
  await client.query(`set maintenance_work_mem = '4GB'`);
  for (const index of indexes) {
    // An ANN index as search builds it, with lists for the rows it is built over (its definition
    // has those of the space's first item).
    if (index.indexname.endsWith('_ann')) await createAnnIndex(db, index.tablename, { concurrently: false });
    else await client.query(index.indexdef);
  }
  await client.query('analyze');
}
