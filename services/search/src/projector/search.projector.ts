import { Injectable } from '@nestjs/common';
import { sql, type Transaction } from 'kysely';
import {
  decodeVector,
  type EmbeddingComputed,
  type EventOf,
  type ItemIngested,
  type ModelAdded,
  type NotePut,
  type PartExtracted,
} from '@memex/contracts';
import type { LoggedEvent } from '@memex/bus';
import { Projector, type Projection } from '@memex/runtime';
import type { ItemsTable, SearchDatabase } from '../schema.js';
import { searchMigrations } from './migrations.js';
import { allSpaces, ensureSpace, vectorLiteral, vectorTables } from './vectors.js';

type Trx = Transaction<SearchDatabase>;
type ItemRow = Omit<ItemsTable, 'has_text' | 'parts_revision' | 'parts_pipeline'>;

/** The words of a text as the vocabulary counts them (lowercase runs of letters and digits). */
const wordsOf = (text: unknown) =>
  sql`(select distinct w from regexp_split_to_table(lower(${text}), '[^[:alnum:]]+') w where length(w) between 2 and 40)`;

/** A part's full-text vector: its item's title (weight A) ahead of its own text (weight B). */
const partTsv = (title: unknown, text: unknown) =>
  sql`setweight(to_tsvector('english', ${title}), 'A') || setweight(to_tsvector('english', ${text}), 'B')`;

interface Address {
  name?: string;
  address?: string;
}

/** `name <address>` lines, lowercased, from mail meta's address lists. */
function people(meta: Record<string, unknown>, fields: string[]): string {
  const lines: string[] = [];
  for (const field of fields) {
    const list = meta[field];
    if (!Array.isArray(list)) continue;
    for (const entry of list as Address[]) {
      const name = typeof entry?.name === 'string' ? entry.name : '';
      const address = typeof entry?.address === 'string' ? entry.address : '';
      if (name || address) lines.push(`${name} <${address}>`.trim().toLowerCase());
    }
  }
  return lines.join('\n');
}

/**
 * The search read model: items with what filters and scopes need, passages with full-text
 * vectors, a vocabulary for typo/prefix expansion, and a pair of vector tables per embedding
 * space. Rows derive from events only (times from the events, table names from the order spaces
 * appear in the log), so a replay rebuilds it identically.
 */
@Injectable()
@Projector({ name: 'search', migrations: searchMigrations })
export class SearchProjector implements Projection {
  async apply(trx: Trx, { seq, event }: LoggedEvent): Promise<void> {
    switch (event.type) {
      case 'item.ingested':
        return this.itemIngested(trx, seq, event as EventOf<typeof ItemIngested>);
      case 'note.put':
        return this.notePut(trx, seq, event as EventOf<typeof NotePut>);
      case 'part.extracted':
        return this.partExtracted(trx, event as EventOf<typeof PartExtracted>);
      case 'embedding.computed':
        return this.embeddingComputed(trx, seq, event as EventOf<typeof EmbeddingComputed>);
      case 'item.deleted':
        return this.itemDeleted(trx, seq, (event.data as { id: string }).id);
      case 'model.added':
        return this.modelAdded(trx, seq, event as EventOf<typeof ModelAdded>);
      case 'model.activated':
        await trx
          .updateTable('state')
          .set({ chosen: (event.data as { space: string }).space })
          .where('id', '=', 1)
          .execute();
        return this.maybeSwitch(trx);
    }
  }

  private async itemIngested(trx: Trx, seq: number, event: EventOf<typeof ItemIngested>): Promise<void> {
    const { data } = event;
    await this.upsertItem(trx, {
      id: data.id,
      kind: data.kind,
      title: data.title,
      labels: [...event.labels].sort(),
      spam: event.spam ?? data.meta.spam === true,
      source_kind: data.source.kind,
      source_id: data.source.id,
      people_from: people(data.meta, ['from']),
      people_to: people(data.meta, ['to', 'cc', 'bcc']),
      occurred_at: new Date(event.occurred_at),
      revision: data.revision,
      seq,
    });
  }

  private async notePut(trx: Trx, seq: number, event: EventOf<typeof NotePut>): Promise<void> {
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

  /** Inserts or replaces an item's searchable facts, keeping its parts' copies of title and scope in step. */
  private async upsertItem(trx: Trx, row: ItemRow): Promise<void> {
    if (await this.isDeleted(trx, row.id)) return;
    const before = await trx
      .selectFrom('items')
      .select(['title', 'kind', 'labels', 'spam'])
      .where('id', '=', row.id)
      .executeTakeFirst();
    const titleTsv = sql<string>`to_tsvector('english', ${row.title})`;
    await trx
      .insertInto('items')
      .values({ ...row, title_tsv: titleTsv } as never)
      .onConflict((oc) => oc.column('id').doUpdateSet({ ...row, title_tsv: titleTsv } as never))
      .execute();
    if (before?.title !== row.title) {
      if (before) await this.countWords(trx, sql`${before.title}`, -1);
      await this.countWords(trx, sql`${row.title}`, 1);
      await sql`update parts set tsv = ${partTsv(row.title, sql.ref('text'))} where item_id = ${row.id}`.execute(trx);
    }
    if (
      before &&
      (before.kind !== row.kind || before.spam !== row.spam || before.labels.join('\n') !== row.labels.join('\n'))
    ) {
      await trx
        .updateTable('parts')
        .set({ kind: row.kind, labels: row.labels, spam: row.spam })
        .where('item_id', '=', row.id)
        .execute();
    }
  }

  private async partExtracted(trx: Trx, event: EventOf<typeof PartExtracted>): Promise<void> {
    const { data } = event;
    const item = await trx.selectFrom('items').selectAll().where('id', '=', data.item_id).executeTakeFirst();
    // Parts of an older version than the item's (a slow job) are stale.
    if (!item || data.revision < item.revision) return;
    if (item.parts_revision !== data.revision || item.parts_pipeline !== data.pipeline) {
      await this.clearParts(trx, item.id);
      await trx
        .updateTable('items')
        .set({ parts_revision: data.revision, parts_pipeline: data.pipeline, has_text: data.total > 0 })
        .where('id', '=', item.id)
        .execute();
      if (data.total > 0) await this.addTextItems(trx, 1);
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
      tsv: partTsv(item.title, part.text),
    }));
    const inserted = await trx
      .insertInto('parts')
      .values(values as never)
      .onConflict((oc) => oc.columns(['item_id', 'ordinal']).doNothing())
      .returning('ordinal')
      .execute();
    if (inserted.length === 0) return;
    await sql`insert into words (word, uses)
      select w, count(*)::int from parts p, lateral ${wordsOf(sql.ref('p.text'))} x
      where p.item_id = ${item.id} and p.ordinal = any(${inserted.map((r) => r.ordinal)}::int[]) group by w
      on conflict (word) do update set uses = words.uses + excluded.uses`.execute(trx);
  }

  private async embeddingComputed(trx: Trx, seq: number, event: EventOf<typeof EmbeddingComputed>): Promise<void> {
    const { data } = event;
    const item = await trx
      .selectFrom('items')
      .select(['id', 'parts_revision', 'parts_pipeline'])
      .where('id', '=', data.item_id)
      .executeTakeFirst();
    // Vectors of parts we do not hold (an older version, another split) are stale.
    if (!item || item.parts_revision !== data.revision || item.parts_pipeline !== data.pipeline) return;
    const space = await ensureSpace(trx, { space: data.space, dims: data.dims }, seq);
    const tables = vectorTables(space.ord);
    if (data.vectors.length > 0) {
      const rows = data.vectors.map(
        (v) => sql`(${item.id}, ${v.ordinal}::int, ${vectorLiteral(decodeVector(v.vector, data.dims))}::halfvec)`,
      );
      await sql`insert into ${sql.table(tables.parts)} (item_id, ordinal, embedding)
        select v.item_id, v.ordinal, v.embedding from (values ${sql.join(rows)}) v (item_id, ordinal, embedding)
        where exists (select 1 from parts p where p.item_id = v.item_id and p.ordinal = v.ordinal)
        on conflict do nothing`.execute(trx);
    }
    if (data.item) {
      const literal = vectorLiteral(decodeVector(data.item, data.dims));
      await sql`insert into ${sql.table(tables.items)} (item_id, embedding) values (${item.id}, ${literal}::halfvec)
        on conflict (item_id) do update set embedding = excluded.embedding`.execute(trx);
    }
    const marked = await trx
      .insertInto('embedded')
      .values({ item_id: item.id, ord: space.ord })
      .onConflict((oc) => oc.doNothing())
      .returning('item_id')
      .execute();
    if (marked.length > 0) {
      await trx
        .updateTable('spaces')
        .set((eb) => ({ embedded_items: eb('embedded_items', '+', 1) }))
        .where('ord', '=', space.ord)
        .execute();
      await this.maybeSwitch(trx);
    }
  }

  private async itemDeleted(trx: Trx, seq: number, id: string): Promise<void> {
    await this.clearParts(trx, id);
    const removed = await trx
      .deleteFrom('items')
      .where('id', '=', id)
      .returning(['title', 'has_text'])
      .executeTakeFirst();
    if (removed) await this.countWords(trx, sql`${removed.title}`, -1);
    if (removed?.has_text) await this.addTextItems(trx, -1);
    await trx
      .insertInto('tombstones')
      .values({ id, seq })
      .onConflict((oc) => oc.doNothing())
      .execute();
    await this.maybeSwitch(trx);
  }

  private async modelAdded(trx: Trx, seq: number, event: EventOf<typeof ModelAdded>): Promise<void> {
    const { data } = event;
    await ensureSpace(trx, { ...data }, seq);
    await trx.updateTable('state').set({ chosen: data.space }).where('id', '=', 1).execute();
    await this.maybeSwitch(trx);
  }

  /** Removes an item's passages, their words and its vectors in every space (a new version or a deletion). */
  private async clearParts(trx: Trx, id: string): Promise<void> {
    const item = await trx.selectFrom('items').select(['has_text']).where('id', '=', id).executeTakeFirst();
    const counted = await sql<{ word: string; uses: number }>`update words set uses = words.uses - x.n
      from (select w, count(*)::int n from parts p, lateral ${wordsOf(sql.ref('p.text'))} x where p.item_id = ${id} group by w) x
      where words.word = x.w returning words.word, words.uses`.execute(trx);
    const emptied = counted.rows.filter((r) => r.uses <= 0).map((r) => r.word);
    if (emptied.length > 0) await trx.deleteFrom('words').where('word', 'in', emptied).execute();
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

  /** Adds (or with -1 removes) one use of each word of a text to the vocabulary. */
  private async countWords(trx: Trx, text: ReturnType<typeof sql>, delta: 1 | -1): Promise<void> {
    if (delta > 0) {
      await sql`insert into words (word, uses) select w, 1 from ${wordsOf(text)} x
        on conflict (word) do update set uses = words.uses + 1`.execute(trx);
      return;
    }
    await sql`update words set uses = uses - 1 where word in ${wordsOf(text)}`.execute(trx);
    await sql`delete from words where uses <= 0 and word in ${wordsOf(text)}`.execute(trx);
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
    const state = await trx.selectFrom('state').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
    if (state.chosen === null || state.chosen === state.active) return;
    const chosen = await trx
      .selectFrom('spaces')
      .select('embedded_items')
      .where('space', '=', state.chosen)
      .executeTakeFirst();
    if (chosen && chosen.embedded_items >= state.text_items) {
      await trx.updateTable('state').set({ active: state.chosen }).where('id', '=', 1).execute();
    }
  }

  private async isDeleted(trx: Trx, id: string): Promise<boolean> {
    return (await trx.selectFrom('tombstones').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
  }
}
