import type { ColumnType } from 'kysely';

/** jsonb written as JSON text (node-postgres would send a JS array as a Postgres array). */
type Json<T> = ColumnType<T, string, string>;

export interface NotesTable {
  id: string;
  kind: string;
  labels: string[];
  spam: boolean;
  title: string;
  aliases: string[];
  tags: string[];
  links: string[];
  front_matter: Json<Record<string, unknown>>;
  content_hash: string;
  revision: number;
  created_at: Date;
  updated_at: Date;
  /** The last event that changed the row. */
  seq: number;
}

export interface NoteVectorsTable {
  note_id: string;
  space: string;
  /** Little-endian float32, L2-normalised (the item-level vector of embedding.computed). */
  vector: Buffer;
}

export interface EngineStateTable {
  id: number;
  /** The last event that changed what detection reads (notes, their vectors, the chosen space). */
  notes_seq: number;
  chosen_space: string | null;
  /** The last detection run: its corpus fingerprint, the notes_seq it saw, its configuration. */
  fingerprint: string | null;
  detected_notes_seq: number | null;
  config_hash: string | null;
  detected_at: Date | null;
}

export interface DetectionPiecesTable {
  run: string;
  piece: number;
  signals: Json<unknown[]>;
}

export interface SignalsTable {
  key: string;
  id: number;
  kind: string;
  note_ids: string[];
  score: number;
  detail: Json<Record<string, unknown>>;
  status: string;
  snoozed_until: Date | null;
  first_detected_at: Date;
  status_changed_at: Date | null;
  present: boolean;
  inherited_from: string | null;
  judged_note_ids: string[] | null;
  inference_id: number | null;
}

export interface InferencesTable {
  id: number;
  title: string;
  summary: string;
  confidence: number;
  model_id: string;
  signal_key: string | null;
  made_by: string;
  minted_at: Date;
  revision: number;
}

export interface InferenceSourcesTable {
  inference_id: number;
  ordinal: number;
  note_id: string;
  content_hash: string;
  title: string;
  /** null when the note was already gone at mint time: then only the owner sees the inference. */
  kind: string | null;
  labels: string[] | null;
  spam: boolean | null;
}

export interface InsightsDatabase {
  notes: NotesTable;
  note_vectors: NoteVectorsTable;
  tombstones: { id: string };
  engine_state: EngineStateTable;
  detection_pieces: DetectionPiecesTable;
  signals: SignalsTable;
  inferences: InferencesTable;
  inference_sources: InferenceSourcesTable;
}
