import { Injectable } from '@nestjs/common';
import { sql, type Transaction } from 'kysely';
import {
  decodeVector,
  mailMetaOf,
  EmbeddingComputed,
  ItemDeleted,
  ItemIngested,
  ModelActivated,
  ModelAdded,
  NotePut,
  PaperExtracted,
  PhotoTagged,
  PartExtracted,
  type EventOf,
  type MailMeta,
} from '@memex/contracts';
import { On, Projector, type AroundBatch } from '@memex/runtime';
import { partTsv, titleTsv } from '../domain/text.js';
import type { ItemsTable, SearchDatabase } from '../schema.js';
import { searchMigrations } from './migrations.js';
import { allSpaces, ensureSpace, vectorLiteral, vectorTables } from './vectors.js';
import { addWords, countsOf, flushWords, passageCounts, removeWords, stageWords } from './vocabulary.js';

type Trx = Transaction<SearchDatabase>;
// Tags come from media's photo.tagged, not from the item: an upsert keeps them.
type ItemRow = Omit<ItemsTable, 'has_text' | 'parts_revision' | 'parts_pipeline' | 'tags'>;

/** `name <address>` lines, lowercased, from an email's address lists. */
function people(lists: MailMeta['from'][]): string {
  return lists
    .flat()
    .filter(({ name, address }) => name || address)
    .map(({ name, address }) => `${name} <${address}>`.trim().toLowerCase())
    .join('\n');
}

/**
 * The search read model: items with what filters and scopes need, passages with full-text
 * vectors, a vocabulary for typo/prefix expansion, and a pair of vector tables per embedding
 * space. Rows derive from events only (times from the events, table names from the order spaces
 * appear in the log), so a replay rebuilds it identically.
 */
@Injectable()
@Projector({ name: 'search', migrations: searchMigrations })
export class SearchProjector implements AroundBatch<Trx> {
  /** Event by event, with the vocabulary's counts changed once for the whole batch. */
  async aroundBatch(trx: Trx, apply: () => Promise<void>): Promise<void> {
    await stageWords(trx);
    await apply();
    await flushWords(trx);
  }

  @On(ItemIngested)
  async itemIngested(trx: Trx, event: EventOf<typeof ItemIngested>, seq: number): Promise<void> {
    const mail = mailMetaOf(event.data);
    const { data } = event;
    await this.upsertItem(trx, {
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
    });
  }

  @On(NotePut)
  async notePut(trx: Trx, event: EventOf<typeof NotePut>, seq: number): Promise<void> {
    const { data } = event;
    await this.upsertItem(trx, {
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
    });
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
    await this.upsertItem(trx, { ...row, people_from: paper ? paper.authors.join('\n').toLowerCase() : '' });
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

  /** Inserts or replaces an item's searchable facts, keeping its parts' copies of title and scope in step. */
  private async upsertItem(trx: Trx, row: ItemRow): Promise<void> {
    const { rows } = await sql<{
      deleted: boolean;
      title: string | null;
      people_from: string;
      people_to: string;
      kind: string;
      labels: string[];
      spam: boolean;
    }>`
      select exists (select 1 from tombstones where id = ${row.id}) as deleted, i.title, i.people_from, i.people_to,
        i.kind, i.labels, i.spam
      from (values (1)) v left join items i on i.id = ${row.id}`.execute(trx);
    const before = rows[0]!;
    if (before.deleted) return;
    const values = { ...row, title_tsv: titleTsv(row.title, row.people_from, row.people_to) };
    const upsert = trx
      .insertInto('items')
      .values(values as never)
      .onConflict((oc) => oc.column('id').doUpdateSet(values as never));
    if (before.title === null) {
      // A new item: its row and its title's words in one statement.
      await addWords(trx, countsOf(row.title), sql`item as (${upsert}),`);
      return;
    }
    await upsert.execute();
    if (before.title !== row.title) {
      await removeWords(trx, countsOf(before.title));
      await addWords(trx, countsOf(row.title));
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

  @On(PartExtracted)
  async partExtracted(trx: Trx, event: EventOf<typeof PartExtracted>): Promise<void> {
    const { data } = event;
    const item = await trx.selectFrom('items').selectAll().where('id', '=', data.item_id).executeTakeFirst();
    // Parts of an older version than the item's (a slow job) are stale.
    if (!item || data.revision < item.revision) return;
    if (item.parts_revision !== data.revision || item.parts_pipeline !== data.pipeline) {
      if (item.parts_revision !== null) await this.clearParts(trx, item.id);
      const hasText = data.total > 0;
      await sql`with item as (
          update items set parts_revision = ${data.revision}, parts_pipeline = ${data.pipeline}, has_text = ${hasText}
          where id = ${item.id})
        update state set text_items = text_items + ${hasText ? 1 : 0} where id = 1`.execute(trx);
    }
    if (data.parts.length === 0) return;
    const values = data.parts.map((part) => ({
      item_id: item.id,
      ordinal: part.ordinal,
      part_kind: part.kind,
      kind: item.kind,
      labels: item.labels,
      spam: item.spam,
      text: part.text,
      start_offset: part.start,
      end_offset: part.end,
      page: part.page ?? null,
      tsv: partTsv(item.title, part.text, item.people_from, item.people_to),
    }));
    const insert = trx
      .insertInto('parts')
      .values(values as never)
      .onConflict((oc) => oc.columns(['item_id', 'ordinal']).doNothing())
      .returning('text');
    // The parts and their words in one statement; a piece seen before inserts nothing and counts nothing.
    await addWords(trx, passageCounts(sql`inserted`), sql`inserted as (${insert}),`);
  }

  @On(EmbeddingComputed)
  async embeddingComputed(trx: Trx, event: EventOf<typeof EmbeddingComputed>, seq: number): Promise<void> {
    const { data } = event;
    const { rows } = await sql<{ parts_revision: number | null; parts_pipeline: string | null; ord: number | null }>`
      select i.parts_revision, i.parts_pipeline, s.ord from items i left join spaces s on s.space = ${data.space}
      where i.id = ${data.item_id}`.execute(trx);
    const item = rows[0];
    // Vectors of parts we do not hold (an older version, another split) are stale.
    if (!item || item.parts_revision !== data.revision || item.parts_pipeline !== data.pipeline) return;
    const ord = item.ord ?? (await ensureSpace(trx, { space: data.space, dims: data.dims }, seq)).ord;
    const tables = vectorTables(ord);
    const parts = data.vectors.map(
      (v) => sql`(${data.item_id}, ${v.ordinal}::int, ${vectorLiteral(decodeVector(v.vector, data.dims))}::halfvec)`,
    );
    const itemVector = data.item ? vectorLiteral(decodeVector(data.item, data.dims)) : null;
    // Passage vectors, the item vector, and the space's count of embedded items, in one statement.
    await sql`with
      ${
        parts.length > 0
          ? sql`p as (insert into ${sql.table(tables.parts)} (item_id, ordinal, embedding)
        select v.item_id, v.ordinal, v.embedding from (values ${sql.join(parts)}) v (item_id, ordinal, embedding)
        where exists (select 1 from parts x where x.item_id = v.item_id and x.ordinal = v.ordinal)
        on conflict do nothing),`
          : sql``
      }
      ${
        itemVector
          ? sql`i as (insert into ${sql.table(tables.items)} (item_id, embedding) values (${data.item_id}, ${itemVector}::halfvec)
        on conflict (item_id) do update set embedding = excluded.embedding),`
          : sql``
      }
      marked as (insert into embedded (item_id, ord) values (${data.item_id}, ${ord}) on conflict do nothing returning ord)
      update spaces set embedded_items = embedded_items + 1 where ord in (select ord from marked)`.execute(trx);
    await this.maybeSwitch(trx);
  }

  @On(ItemDeleted)
  async itemDeleted(trx: Trx, { data: { id } }: EventOf<typeof ItemDeleted>, seq: number): Promise<void> {
    await this.clearParts(trx, id);
    const removed = await trx
      .deleteFrom('items')
      .where('id', '=', id)
      .returning(['title', 'has_text'])
      .executeTakeFirst();
    if (removed) await removeWords(trx, countsOf(removed.title));
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
    await ensureSpace(trx, { ...data }, seq);
    await trx.updateTable('state').set({ chosen: data.space }).where('id', '=', 1).execute();
    await this.maybeSwitch(trx);
  }

  /** Removes an item's passages, their words and its vectors in every space (a new version or a deletion). */
  private async clearParts(trx: Trx, id: string): Promise<void> {
    const item = await trx.selectFrom('items').select(['has_text']).where('id', '=', id).executeTakeFirst();
    await removeWords(trx, passageCounts(sql`(select text from parts where item_id = ${id})`));
    await trx.deleteFrom('parts').where('item_id', '=', id).execute();
    for (const space of await allSpaces(trx)) {
      const tables = vectorTables(space.ord);
      await sql`delete from ${sql.table(tables.parts)} where item_id = ${id}`.execute(trx);
      await sql`delete from ${sql.table(tables.items)} where item_id = ${id}`.execute(trx);
    }
    const unmarked = await trx.deleteFrom('embedded').where('item_id', '=', id).returning('ord').execute();
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
    await trx
      .updateTable('state')
      .set((eb) => ({ text_items: eb('text_items', '+', delta) }))
      .where('id', '=', 1)
      .execute();
  }

  /** Search moves to the chosen space once every item with text has been embedded there. */
  private async maybeSwitch(trx: Trx): Promise<void> {
    await sql`update state set active = state.chosen from spaces
      where state.id = 1 and state.chosen is distinct from state.active
        and spaces.space = state.chosen and spaces.embedded_items >= state.text_items`.execute(trx);
  }
}
