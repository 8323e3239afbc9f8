import type { Generated } from 'kysely';

/** The ingest read model: the base item every handler shares (seed §4.1). */
export interface ItemsTable {
  id: string;
  kind: string;
  title: string;
  text: string;
  labels: string[];
  spam: Generated<boolean>;
  source_kind: string;
  source_id: string;
  external_id: string | null;
  occurred_at: Date | null;
  added_at: Date;
  made_by_kind: string;
  made_by_id: string;
  meta: Record<string, unknown>;
  /** Sequence of the last event that changed the row. */
  seq: number;
}

/** Deleted items: events about them that arrive later are ignored. */
export interface TombstonesTable {
  id: string;
  seq: number;
}

export interface IngestDatabase {
  items: ItemsTable;
  tombstones: TombstonesTable;
}
