import { Injectable } from '@nestjs/common';
import { sql, type Kysely, type Transaction } from 'kysely';
import {
  decodeVector,
  EmbeddingComputed,
  ItemDeleted,
  ItemIngested,
  MailSpamMarked,
  ModelActivated,
  ModelAdded,
  NotePut,
  PaperExtracted,
  PhotoTagged,
  PartExtracted,
  eventCatalog,
  type EventOf,
  type MailMeta,
} from '@memex/contracts';
import type { LoggedEvent } from '@memex/bus';
import { bulkLoading, On, OnBatch, Projector, type AroundBatch, type BulkLanes, type LaneOf } from '@memex/runtime';
import { partTsv, passageTsv, peopleTsv, titleTsv, titleWordsTsv } from '../domain/text.js';
import type { ItemsTable, SearchDatabase } from '../schema.js';
import { searchMigrations } from './migrations.js';
import {
  allSpaces,
  createAnnIndex,
  createVectorIndexes,
  ensureSpace,
  freshFull,
  freshTables,
  vectorLiteral,
  vectorTables,
} from './vectors.js';
import { groupsOf, type Embedded, type Extracted, type ImportEvent, type Ingested } from './groups.js';
import { addWords, countWords, flushWords, removeWords, stageWords } from './vocabulary.js';

type Trx = Transaction<SearchDatabase>;
// Tags come from media's photo.tagged, not from the item: an upsert keeps them.
type ItemRow = Omit<ItemsTable, 'has_text' | 'parts_revision' | 'parts_pipeline' | 'tags'>;
/** What an update compares with (title null: no such item yet). */
type ItemBefore = Pick<ItemsTable, 'people_from' | 'people_to' | 'kind' | 'labels' | 'spam'> & { title: string | null };

/** `name <address>` lines, lowercased, from an email's address lists. */
function people(lists: MailMeta['from'][]): string {
  return lists
    .flat()
    .filter(({ name, address }) => name || address)
    .map(({ name, address }) => `${name} <${address}>`.trim().toLowerCase())
    .join('\n');
}

/** An item as item.ingested describes it. */
function ingestedRow({ seq, event }: Ingested): ItemRow {
  const { data } = event;
  const mail = data.kind === 'email' ? data.meta : null;
  return {
    id: data.id,
    kind: data.kind,
    title: data.title,
    labels: [...event.labels].sort(),
    spam: event.spam ?? mail?.spam ?? false,
    source_kind: data.source.kind,
    source_id: data.source.id,
    people_from: mail ? people([mail.from]) : '',
    people_to: mail ? people([mail.to, mail.cc, mail.bcc]) : '',
    occurred_at: new Date(event.occurred_at),
    revision: data.revision,
    seq,
  };
}

/**
 * The lane of an event in a rebuild's bulk load (see `SearchProjector.bulkLanes`): its item's, or
 * none for one that makes a space (vectors of a space not in `spaces`) or chooses a model.
 */
function itemLane(logged: LoggedEvent, spaces: ReadonlySet<string>): string | undefined {
  const event = eventCatalog.upcast(logged.event);
  const data = event.data as { id?: string; item_id?: string; space?: string };
  switch (event.type) {
    case ItemIngested.type:
    case NotePut.type:
    case ItemDeleted.type:
    case MailSpamMarked.type:
      return data.id;
    case EmbeddingComputed.type:
      return spaces.has(data.space!) ? data.item_id : undefined;
    case PartExtracted.type:
    case PaperExtracted.type:
    case PhotoTagged.type:
      return data.item_id;
    default:
      return undefined;
  }
}

/**
 * The search read model: items with what filters and scopes need, passages with full-text
 * vectors, a vocabulary for typo/prefix expansion, and a pair of vector tables per embedding
 * space. Rows derive from events only (times from the events, table names from the order spaces
 * appear in the log), so a replay rebuilds it identically. A rebuild's batches are twice live's:
 * its bulk load splits them into two lanes (`bulkLanes`).
 */
@Injectable()
@Projector({ name: 'search', migrations: searchMigrations, rebuildBatch: 1000 })
export class SearchProjector implements AroundBatch<Trx>, BulkLanes<Kysely<SearchDatabase>> {
  /**
   * A rebuild's bulk load goes in lanes by item: an item's events touch its own rows, and what
   * items share — the vocabulary's counts, the counts of items with text and of items embedded in
   * each space — it puts off until the load is done (`afterBulkLoad`). An event that makes a space
   * or chooses a model goes alone, as does every event while search waits to switch spaces: the
   * switch comes at the first event after which every item with text is embedded, which depends
   * on the order of all of them.
   */
  async bulkLanes(db: Kysely<SearchDatabase>): Promise<LaneOf | undefined> {
    const { rows } = await sql<{ pending: boolean }>`
      select chosen is distinct from active as pending from state where id = 1`.execute(db);
    if (rows[0]!.pending) return undefined;
    const spaces = new Set((await allSpaces(db)).map((space) => space.space));
    return (logged) => itemLane(logged, spaces);
  }

  /**
   * A rebuild's bulk load is done. What it put off: the vocabulary's counts and the counts of
   * items with text and embedded (counted from the rows, as the events kept them); and each
   * space's ANN indexes, built now with lists for all the rows loaded (the definitions put aside
   * at the first vectors would build them with that first batch's lists, and every query would
   * read them whole).
   */
  async afterBulkLoad(db: Kysely<SearchDatabase>): Promise<void> {
    await db.transaction().execute(async (trx) => {
      await flushWords(trx, 'word_delta_bulk');
      await sql`update state set text_items = (select count(*)::int from items where has_text) where id = 1`.execute(
        trx,
      );
      await sql`update spaces set embedded_items = (select count(*)::int from embedded e where e.ord = spaces.ord)`.execute(
        trx,
      );
    });
    // Side by side, on as many connections as the rebuild has.
    const tables = (await allSpaces(db)).flatMap((space) => Object.values(vectorTables(space.ord)));
    await Promise.all(
      tables.map((table) => db.connection().execute((conn) => createAnnIndex(conn, table, { concurrently: false }))),
    );
  }

  /** Event by event, with the vocabulary's counts changed once for the whole batch (a bulk load's once for the load). */
  async aroundBatch(trx: Trx, apply: () => Promise<void>): Promise<void> {
    if (await bulkLoading(trx)) return apply();
    await stageWords(trx);
    await apply();
    await flushWords(trx);
  }

  /**
   * An import's events — items, their passages, their vectors — a few statements for a whole
   * group of them (see groups.ts) rather than several for each; one event is a group of one.
   */
  @OnBatch(ItemIngested, PartExtracted, EmbeddingComputed)
  async imported(trx: Trx, run: ImportEvent[]): Promise<void> {
    const { rows } = await sql<{ pending: boolean }>`
      select chosen is distinct from active as pending from state where id = 1`.execute(trx);
    for (const group of groupsOf(run, rows[0]!.pending)) {
      await this.upsertItems(trx, group.ingested.map(ingestedRow));
      await this.partsExtracted(trx, group.extracted);
      await this.embeddingsComputed(trx, group.embedded);
    }
  }

  @On(NotePut)
  async notePut(trx: Trx, event: EventOf<typeof NotePut>, seq: number): Promise<void> {
    const { data } = event;
    await this.upsertItems(trx, [
      {
        id: data.id,
        kind: 'note',
        title: data.title,
        labels: [...event.labels].sort(),
        spam: false,
        source_kind: 'memex',
        source_id: 'notes',
        people_from: '',
        people_to: '',
        occurred_at: new Date(event.occurred_at),
        // Each put replaces the note; its parts come from the job of this very event.
        revision: seq,
        seq,
      },
    ]);
  }

  /**
   * A paper's authors, as tier 0 read them, are who it is from: `author:` and `from:` find it and
   * its words include their names. A reading of an older revision changes nothing.
   */
  @On(PaperExtracted)
  async paperExtracted(trx: Trx, event: EventOf<typeof PaperExtracted>): Promise<void> {
    const { item_id: id, revision, paper } = event.data;
    const row = await trx
      .selectFrom('items')
      .select(['id', 'kind', 'title', 'labels', 'spam', 'source_kind', 'source_id', 'people_from', 'people_to'])
      .select(['occurred_at', 'revision', 'seq'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row || row.revision !== revision) return;
    await this.upsertItems(trx, [{ ...row, people_from: paper ? paper.authors.join('\n').toLowerCase() : '' }]);
  }

  /** What media saw in a photo or video: its tags replace the last ones (object:/tag: filters). */
  @On(PhotoTagged)
  async photoTagged(trx: Trx, event: EventOf<typeof PhotoTagged>): Promise<void> {
    const { item_id: id, tags } = event.data;
    await trx
      .updateTable('items')
      .set({ tags: [...new Set(tags.map((t) => t.tag.toLowerCase()))].sort() })
      .where('id', '=', id)
      .execute();
  }

  /**
   * Inserts or replaces items' searchable facts (rows of distinct items), keeping their parts'
   * copies of title and scope in step. New items go in with one statement; a deleted one stays out.
   */
  private async upsertItems(trx: Trx, rows: ItemRow[]): Promise<void> {
    if (rows.length === 0) return;
    const { rows: found } = await sql<ItemBefore & { id: string; deleted: boolean }>`
      select v.id, exists (select 1 from tombstones t where t.id = v.id) as deleted, i.title, i.people_from,
        i.people_to, i.kind, i.labels, i.spam
      from unnest(${rows.map((row) => row.id)}::text[]) v (id) left join items i on i.id = v.id`.execute(trx);
    const before = new Map(found.map((item) => [item.id, item]));
    const live = rows.filter((row) => !before.get(row.id)!.deleted);
    const fresh = live.filter((row) => before.get(row.id)!.title === null);
    if (fresh.length > 0) {
      const column = <T>(pick: (row: ItemRow) => T) => fresh.map(pick);
      // Arrays through unnest, the tsvector computed in the select: a multi-row VALUES with an
      // expression per row took twice as long to plan and run. The rows and their titles' words
      // in one statement.
      const insert = sql`insert into items (id, kind, title, labels, spam, source_kind, source_id, people_from,
          people_to, occurred_at, revision, seq, title_tsv)
        select v.id, v.kind, v.title,
          array(select l from jsonb_array_elements_text(v.labels) with ordinality x (l, n) order by n),
          v.spam, v.source_kind, v.source_id, v.people_from, v.people_to, v.occurred_at, v.revision, v.seq,
          ${titleTsv(sql.ref('v.title'), sql.ref('v.people_from'), sql.ref('v.people_to'))}
        from unnest(${column((r) => r.id)}::text[], ${column((r) => r.kind)}::text[], ${column((r) => r.title)}::text[],
          ${column((r) => JSON.stringify(r.labels))}::jsonb[], ${column((r) => r.spam)}::boolean[],
          ${column((r) => r.source_kind)}::text[], ${column((r) => r.source_id)}::text[],
          ${column((r) => r.people_from)}::text[], ${column((r) => r.people_to)}::text[],
          ${column((r) => r.occurred_at)}::timestamptz[], ${column((r) => r.revision)}::bigint[],
          ${column((r) => r.seq)}::bigint[])
          v (id, kind, title, labels, spam, source_kind, source_id, people_from, people_to, occurred_at, revision, seq)`;
      await addWords(trx, countWords(fresh.map((row) => row.title)), sql`item as (${insert}),`);
    }
    for (const row of live) {
      const known = before.get(row.id)!;
      if (known.title !== null) await this.updateItem(trx, row, known as ItemBefore & { title: string });
    }
  }

  private async updateItem(trx: Trx, row: ItemRow, before: ItemBefore & { title: string }): Promise<void> {
    const values = { ...row, title_tsv: titleTsv(row.title, row.people_from, row.people_to) };
    await trx
      .updateTable('items')
      .set(values as never)
      .where('id', '=', row.id)
      .execute();
    if (before.title !== row.title) {
      await removeWords(trx, countWords([before.title]));
      await addWords(trx, countWords([row.title]));
    }
    if (before.title !== row.title || before.people_from !== row.people_from || before.people_to !== row.people_to) {
      const tsv = partTsv(row.title, sql.ref('text'), row.people_from, row.people_to);
      await sql`update parts set tsv = ${tsv} where item_id = ${row.id}`.execute(trx);
    }
    if (before.kind !== row.kind || before.spam !== row.spam || before.labels.join('\n') !== row.labels.join('\n')) {
      await trx
        .updateTable('parts')
        .set({ kind: row.kind, labels: row.labels, spam: row.spam })
        .where('item_id', '=', row.id)
        .execute();
    }
  }

  /**
   * Passages of items, in log order. The first piece of an item's new split replaces the passages
   * it had; pieces of an older version than the item's (a slow job) are stale. A group holds one
   * split per item (groups.ts), so each item's state is read once.
   */
  private async partsExtracted(trx: Trx, run: Extracted[]): Promise<void> {
    if (run.length === 0) return;
    const ids = [...new Set(run.map(({ event }) => event.data.item_id))];
    const items = new Map(
      (await trx.selectFrom('items').selectAll().where('id', 'in', ids).execute()).map((item) => [item.id, item]),
    );
    const current = run
      .map(({ event }) => event.data)
      .filter((data) => {
        const item = items.get(data.item_id);
        return item !== undefined && data.revision >= item.revision;
      });
    const splits = new Map<string, { revision: number; pipeline: string; hasText: boolean }>();
    for (const data of current) {
      const item = items.get(data.item_id)!;
      if (splits.has(item.id) || (item.parts_revision === data.revision && item.parts_pipeline === data.pipeline))
        continue;
      splits.set(item.id, { revision: data.revision, pipeline: data.pipeline, hasText: data.total > 0 });
      if (item.parts_revision !== null) await this.clearParts(trx, item.id);
    }
    if (splits.size > 0) {
      const split = [...splits.values()];
      // A bulk load counts items with text once, after it (see bulkLanes).
      const counted = (await bulkLoading(trx))
        ? sql`select count(*) from item`
        : sql`update state set text_items = text_items + (select count(*)::int from s where s.has_text) where id = 1`;
      await sql`with s as (
          select * from unnest(${[...splits.keys()]}::text[], ${split.map((s) => s.revision)}::bigint[],
            ${split.map((s) => s.pipeline)}::text[], ${split.map((s) => s.hasText)}::boolean[]) s (id, revision, pipeline, has_text)),
        item as (update items i set parts_revision = s.revision, parts_pipeline = s.pipeline, has_text = s.has_text
          from s where i.id = s.id returning i.id)
        ${counted}`.execute(trx);
    }
    // A passage seen before inserts nothing and counts nothing (the first of two in a run neither).
    const seen = new Set<string>();
    const parts = current.flatMap((data) =>
      data.parts
        .filter((part) => !seen.has(`${data.item_id}\n${part.ordinal}`) && seen.add(`${data.item_id}\n${part.ordinal}`))
        .map((part) => ({ item_id: data.item_id, ...part })),
    );
    if (parts.length === 0) return;
    const column = <T>(pick: (part: (typeof parts)[number]) => T) => parts.map(pick);
    // An item's title and people are turned into words once, not once per passage (materialized).
    const tsv = passageTsv(sql.ref('i.title_words'), sql.ref('v.text'), sql.ref('i.people'));
    // The passages, with their items' title and scope; those a conflict kept out count no words.
    const { rows: inserted } = await sql<{ item_id: string; ordinal: number }>`with
        v as (select * from unnest(${column((p) => p.item_id)}::text[], ${column((p) => p.ordinal)}::int[],
          ${column((p) => p.kind)}::text[], ${column((p) => p.text)}::text[], ${column((p) => p.start)}::int[],
          ${column((p) => p.end)}::int[], ${column((p) => p.page ?? null)}::int[])
          v (item_id, ordinal, part_kind, text, start_offset, end_offset, page)),
        i as materialized (select id, kind, labels, spam, ${titleWordsTsv(sql.ref('title'))} as title_words,
            ${peopleTsv(sql.ref('people_from'), sql.ref('people_to'))} as people
          from items where id in (select item_id from v))
      insert into parts (item_id, ordinal, part_kind, kind, labels, spam, text, start_offset, end_offset, page, tsv)
      select v.item_id, v.ordinal, v.part_kind, i.kind, i.labels, i.spam, v.text, v.start_offset, v.end_offset, v.page, ${tsv}
      from v join i on i.id = v.item_id
      on conflict (item_id, ordinal) do nothing returning item_id, ordinal`.execute(trx);
    const texts = new Map(parts.map((part) => [`${part.item_id}\n${part.ordinal}`, part.text]));
    await addWords(trx, countWords(inserted.map((row) => texts.get(`${row.item_id}\n${row.ordinal}`)!)));
  }

  /**
   * Vectors of items' passages and of the items, one statement per space. Vectors of parts we do
   * not hold (an older version, another split) are stale. A space is made at its first vectors.
   */
  private async embeddingsComputed(trx: Trx, run: Embedded[]): Promise<void> {
    if (run.length === 0) return;
    const ids = [...new Set(run.map(({ event }) => event.data.item_id))];
    const items = new Map(
      (
        await trx
          .selectFrom('items')
          .select(['id', 'parts_revision', 'parts_pipeline'])
          .where('id', 'in', ids)
          .execute()
      ).map((item) => [item.id, item]),
    );
    const current = run.filter(({ event: { data } }) => {
      const item = items.get(data.item_id);
      return item !== undefined && item.parts_revision === data.revision && item.parts_pipeline === data.pipeline;
    });
    if (current.length === 0) return;
    const ords = new Map((await allSpaces(trx)).map((space) => [space.space, space.ord]));
    const bySpace = new Map<number, Embedded['event']['data'][]>();
    const dims = new Map<number, number>();
    const created: number[] = [];
    for (const { seq, event } of current) {
      const { data } = event;
      let ord = ords.get(data.space);
      if (ord === undefined) {
        const space = await ensureSpace(trx, { space: data.space, dims: data.dims }, seq);
        ord = space.ord;
        if (space.created) created.push(ord);
      }
      ords.set(data.space, ord);
      dims.set(ord, data.dims);
      bySpace.set(ord, [...(bySpace.get(ord) ?? []), data]);
    }
    // Live vectors wait in the fresh tables (see freshTables); a rebuild's bulk load and a new
    // space's first vectors go into the indexed tables, whose indexes are built over them after.
    const bulk = await bulkLoading(trx);
    for (const [ord, embedded] of bySpace) {
      const direct = bulk || created.includes(ord) || (await freshFull(trx, { ord, dims: dims.get(ord)! }));
      await this.storeVectors(trx, ord, embedded, direct);
    }
    // A space's indexes built over its first vectors at once (see ensureSpace).
    for (const ord of created) await createVectorIndexes(trx, ord);
    await this.maybeSwitch(trx);
  }

  /**
   * One space's vectors, into its indexed tables (`direct`) or its fresh ones: a passage's first
   * vector counts (in any table, a segment's too, as a conflict would keep it), an item's last
   * (leaving the others).
   */
  private async storeVectors(trx: Trx, ord: number, run: Embedded['event']['data'][], direct: boolean): Promise<void> {
    const [tables, other] = direct ? [vectorTables(ord), freshTables(ord)] : [freshTables(ord), vectorTables(ord)];
    const parts = new Map<string, { item_id: string; ordinal: number; embedding: string }>();
    const itemVectors = new Map<string, string>();
    for (const data of run) {
      for (const v of data.vectors) {
        const key = `${data.item_id}\n${v.ordinal}`;
        if (!parts.has(key))
          parts.set(key, {
            item_id: data.item_id,
            ordinal: v.ordinal,
            embedding: vectorLiteral(decodeVector(v.vector, data.dims)),
          });
      }
      if (data.item) itemVectors.set(data.item_id, vectorLiteral(decodeVector(data.item, data.dims)));
    }
    const passages = [...parts.values()];
    const embedded = [...new Set(run.map((data) => data.item_id))];
    const fresh = freshTables(ord);
    // The fresh tables first, always: they are the layout lock a segment's swap holds (see segments.ts).
    await sql`lock table ${sql.table(fresh.parts)}, ${sql.table(fresh.items)} in row exclusive mode`.execute(trx);
    // A mover moving these vectors right now holds their fresh rows: wait for it first, so that the
    // statement below sees them in the indexed tables. Checked in the same statement, a moved row
    // was still absent from them, and the insert, once the move freed its key, kept it in both.
    if (!direct) {
      await sql`select 1 from ${sql.table(tables.parts)} where item_id = any(${embedded}::text[]) for update`.execute(
        trx,
      );
      await sql`select 1 from ${sql.table(tables.items)} where item_id = any(${embedded}::text[]) for update`.execute(
        trx,
      );
    }
    // Passage vectors, item vectors, and the space's count of embedded items (a bulk load's after it), in one statement.
    const counted = (await bulkLoading(trx))
      ? sql`select count(*) from marked`
      : sql`update spaces set embedded_items = embedded_items + (select count(*)::int from marked)
      where ord = ${ord} and exists (select 1 from marked)`;
    await sql`with
      p as (insert into ${sql.table(tables.parts)} (item_id, ordinal, embedding)
        select v.item_id, v.ordinal, v.embedding::halfvec
        from unnest(${passages.map((p) => p.item_id)}::text[], ${passages.map((p) => p.ordinal)}::int[],
          ${passages.map((p) => p.embedding)}::text[]) v (item_id, ordinal, embedding)
        where exists (select 1 from parts x where x.item_id = v.item_id and x.ordinal = v.ordinal)
          and not exists (select 1 from ${sql.table(other.parts)} o where o.item_id = v.item_id and o.ordinal = v.ordinal)
          ${direct ? sql`and not exists (select 1 from ${sql.table(tables.parts)} s where s.item_id = v.item_id and s.ordinal = v.ordinal)` : sql``}
        on conflict do nothing),
      replaced as (delete from ${sql.table(other.items)} where item_id = any(${[...itemVectors.keys()]}::text[])),
      ${direct ? sql`segments as (delete from ${sql.table(tables.items)} where item_id = any(${[...itemVectors.keys()]}::text[]) and tableoid <> ${tables.items}::regclass),` : sql``}
      i as (insert into ${sql.table(tables.items)} (item_id, embedding)
        select v.item_id, v.embedding::halfvec from unnest(${[...itemVectors.keys()]}::text[], ${[...itemVectors.values()]}::text[]) v (item_id, embedding)
        on conflict (item_id) do update set embedding = excluded.embedding),
      marked as (insert into embedded (item_id, ord) select item_id, ${ord}::int from unnest(${embedded}::text[]) item_id
        on conflict do nothing returning ord)
      ${counted}`.execute(trx);
  }

  /** A message found to be spam after it was stored: its item and passages are hidden from agents. */
  @On(MailSpamMarked)
  async spamMarked(trx: Trx, { data: { id } }: EventOf<typeof MailSpamMarked>): Promise<void> {
    await trx.updateTable('items').set({ spam: true }).where('id', '=', id).execute();
    await trx.updateTable('parts').set({ spam: true }).where('item_id', '=', id).execute();
  }

  @On(ItemDeleted)
  async itemDeleted(trx: Trx, { data: { id } }: EventOf<typeof ItemDeleted>, seq: number): Promise<void> {
    await this.clearParts(trx, id);
    const removed = await trx
      .deleteFrom('items')
      .where('id', '=', id)
      .returning(['title', 'has_text'])
      .executeTakeFirst();
    if (removed) await removeWords(trx, countWords([removed.title]));
    if (removed?.has_text) await this.addTextItems(trx, -1);
    await trx
      .insertInto('tombstones')
      .values({ id, seq })
      .onConflict((oc) => oc.doNothing())
      .execute();
    await this.maybeSwitch(trx);
  }

  @On(ModelActivated)
  async modelActivated(trx: Trx, event: EventOf<typeof ModelActivated>): Promise<void> {
    await trx.updateTable('state').set({ chosen: event.data.space }).where('id', '=', 1).execute();
    await this.maybeSwitch(trx);
  }

  @On(ModelAdded)
  async modelAdded(trx: Trx, event: EventOf<typeof ModelAdded>, seq: number): Promise<void> {
    const { data } = event;
    const space = await ensureSpace(trx, { ...data }, seq);
    if (space.created) await createVectorIndexes(trx, space.ord);
    await trx.updateTable('state').set({ chosen: data.space }).where('id', '=', 1).execute();
    await this.maybeSwitch(trx);
  }

  /** Removes an item's passages, their words and its vectors in every space (a new version or a deletion). */
  private async clearParts(trx: Trx, id: string): Promise<void> {
    const item = await trx.selectFrom('items').select(['has_text']).where('id', '=', id).executeTakeFirst();
    const removed = await trx.deleteFrom('parts').where('item_id', '=', id).returning('text').execute();
    await removeWords(trx, countWords(removed.map((part) => part.text)));
    for (const space of await allSpaces(trx)) {
      // Fresh rows first: one the mover holds is waited for, then found in the indexed table (moveFresh).
      for (const tables of [freshTables(space.ord), vectorTables(space.ord)]) {
        await sql`delete from ${sql.table(tables.parts)} where item_id = ${id}`.execute(trx);
        await sql`delete from ${sql.table(tables.items)} where item_id = ${id}`.execute(trx);
      }
    }
    const unmarked = await trx.deleteFrom('embedded').where('item_id', '=', id).returning('ord').execute();
    // A bulk load counts them after it (see bulkLanes).
    if (await bulkLoading(trx)) unmarked.length = 0;
    for (const { ord } of unmarked) {
      await trx
        .updateTable('spaces')
        .set((eb) => ({ embedded_items: eb('embedded_items', '-', 1) }))
        .where('ord', '=', ord)
        .execute();
    }
    if (item?.has_text) {
      await trx.updateTable('items').set({ has_text: false }).where('id', '=', id).execute();
      await this.addTextItems(trx, -1);
    }
  }

  private async addTextItems(trx: Trx, delta: number): Promise<void> {
    // A bulk load counts them after it (see bulkLanes).
    if (await bulkLoading(trx)) return;
    await trx
      .updateTable('state')
      .set((eb) => ({ text_items: eb('text_items', '+', delta) }))
      .where('id', '=', 1)
      .execute();
  }

  /**
   * Search moves to the chosen space once every item with text has been embedded there. A bulk
   * load, which keeps no counts meanwhile, counts the rows (only while a switch waits, when its
   * events go one batch at a time: see bulkLanes).
   */
  private async maybeSwitch(trx: Trx): Promise<void> {
    const [embedded, withText] = (await bulkLoading(trx))
      ? [
          sql`(select count(*) from embedded e where e.ord = spaces.ord)`,
          sql`(select count(*) from items where has_text)`,
        ]
      : [sql`spaces.embedded_items`, sql`state.text_items`];
    await sql`update state set active = state.chosen from spaces
      where state.id = 1 and state.chosen is distinct from state.active
        and spaces.space = state.chosen and ${embedded} >= ${withText}`.execute(trx);
  }
}
