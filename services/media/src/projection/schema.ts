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
  /** The revision faces.detected last described, or null while faces were not looked for. */
  faces_revision: ColumnType<number | null, number | null | undefined, number | null>;
  /** `object:<label>` and `tag:<word>` from photo.tagged. */
  tags: ColumnType<string[], string[] | undefined, string[]>;
  caption: ColumnType<string | null, string | null | undefined, string | null>;
  /** The named people faces.people_seen last said the item shows. */
  people: ColumnType<Array<{ key: string; name: string; faces: number }>, string | undefined, string>;
  /** Why the media pipeline last gave up on it (media.analysis_failed), until an analysis clears it. */
  analysis_failure: ColumnType<AnalysisFailure | null, string | null | undefined, string | null>;
  failed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  seq: number;
}

export interface AnalysisFailure {
  reason: string;
  attempts: number;
  /** The item.ingested event a retry analyses again. */
  ingest_seq: number;
  /** A file read in place: where it lives. */
  location?: string;
}

/** A face the model found in a photo or a video's keyframe, and the cluster it is in. */
export interface FacesTable {
  face_id: string;
  item_id: string;
  model: string;
  box: ColumnType<number[], string, string>;
  score: number;
  frame_at: number | null;
  crop_sha256: string;
  /** pgvector's text form in and out (`[0.1,0.2,…]`), unit length. */
  embedding: string;
  cluster_id: string | null;
  seq: number;
}

/** A face cluster: named by the user (a graph person) or not yet; merged into another or not. */
export interface FaceClustersTable {
  cluster_id: string;
  model: string;
  name: string | null;
  person_key: string | null;
  merged_into: string | null;
}

/** A user's move of a face: into a cluster, or (null) out of any. The model never overrides it. */
export interface FaceMovesTable {
  face_id: string;
  item_id: string;
  to_cluster: string | null;
}

/** Items deleted: what arrives about them later (a late analysis) is ignored. */
export interface TombstonesTable {
  item_id: string;
}

export interface MediaDatabase {
  items: ItemsTable;
  tombstones: TombstonesTable;
  faces: FacesTable;
  face_clusters: FaceClustersTable;
  face_moves: FaceMovesTable;
}
