import type { Generated } from 'kysely';

/** One searchable item: what filters and scope checks need (seed §4.1, DESIGN.md §4). */
export interface ItemsTable {
  id: string;
  kind: string;
  title: string;
  labels: string[];
  spam: boolean;
  source_kind: string;
  source_id: string;
  /** Senders and recipients as `name <address>` lines, lowercased (from:, to:, people filters). */
  people_from: string;
  people_to: string;
  occurred_at: Date | null;
  /** item.ingested's revision; for notes, the sequence of their latest note.put. */
  revision: number;
  /** The revision and pipeline whose parts are stored (null until tier 1 ran). */
  parts_revision: number | null;
  parts_pipeline: string | null;
  /** It has at least one passage: it counts towards a space being complete. */
  has_text: Generated<boolean>;
  /** What media saw in it (`object:dog`, `tag:beach`): photo.tagged's tags. */
  tags: Generated<string[]>;
  seq: number;
}

/** A passage, with its item's scope beside it. `tsv` is set by SQL (title weight A, text weight B). */
export interface PartsTable {
  item_id: string;
  ordinal: number;
  part_kind: string;
  kind: string;
  labels: string[];
  spam: boolean;
  text: string;
  start_offset: number;
  end_offset: number;
  page: number | null;
}

/** The words of every title and passage, for typo, prefix and substring expansion of query words. */
export interface WordsTable {
  word: string;
}

/** How many titles and passages hold each word; a word leaves both tables when it reaches 0. */
export interface WordUsesTable {
  word: string;
  uses: number;
}

/** An embedding space; its vectors live in `vec_<ord>_parts` and `vec_<ord>_items`. */
export interface SpacesTable {
  space: string;
  ord: number;
  dims: number;
  kind: string;
  spec: string;
  name: string | null;
  model: string | null;
  protocol: 'openai' | 'ollama' | null;
  details: Record<string, unknown>;
  added_seq: number;
  /** Items embedded into this space (at their current parts). */
  embedded_items: Generated<number>;
}

/** Which items a space has processed (with or without a vector): a space is complete when all are. */
export interface EmbeddedTable {
  item_id: string;
  ord: number;
}

/** Single row: the chosen space, the one search answers from, and how many items have text. Null = built-in. */
export interface StateTable {
  id: number;
  chosen: string | null;
  active: string | null;
  text_items: number;
}

export interface TombstonesTable {
  id: string;
  seq: number;
}

export interface SearchDatabase {
  items: ItemsTable;
  parts: PartsTable;
  words: WordsTable;
  word_uses: WordUsesTable;
  spaces: SpacesTable;
  embedded: EmbeddedTable;
  state: StateTable;
  tombstones: TombstonesTable;
}
