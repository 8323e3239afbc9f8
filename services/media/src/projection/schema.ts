import type { ColumnType } from 'kysely';
import type { Keyframe, Place, Rendition } from '@memex/contracts';

/** Photos, videos and audio recordings. */
export interface ItemsTable {
  item_id: string;
  revision: number;
  title: string;
  kind: string;
  labels: string[];
  spam: boolean;
  occurred_at: Date | null;
  /** The photo handler's metadata, as item.ingested carried it. */
  meta: ColumnType<Record<string, unknown>, string, string>;
  latitude: number | null;
  longitude: number | null;
  /** The revision photo.analyzed last described, or null while the pipeline has not run. */
  analyzed_revision: number | null;
  renditions: ColumnType<Rendition[], string, string>;
  rendition_problem: string | null;
  /** A video's frames at its scene changes. */
  keyframes: ColumnType<Keyframe[], string, string>;
  place: ColumnType<Place | null, string | null, string | null>;
  place_key: string | null;
  seq: number;
}

/** Items deleted: what arrives about them later (a late analysis) is ignored. */
export interface TombstonesTable {
  item_id: string;
}

export interface MediaDatabase {
  items: ItemsTable;
  tombstones: TombstonesTable;
}
