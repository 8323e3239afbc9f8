import type { ColumnType, Generated } from 'kysely';

/** jsonb arrays are written as JSON text (node-postgres would send a JS array as a Postgres array). */
type JsonArray<T> = ColumnType<T[], string, string>;
type Address = { name: string; address: string };

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
  /** The rest is set for ingested items (null for notes). */
  origin: string | null;
  identity: string | null;
  content_type: string | null;
  content_sha256: string | null;
  text_sha256: string | null;
  size: number | null;
  revision: Generated<number>;
  parent_id: string | null;
  /** Where the original bytes live when they are not a blob (seed §4.1 location_ref). */
  location: Generated<string | null>;
  /** Set while the location cannot be read (location.unreachable), cleared when it can again. */
  unreachable_since: Generated<Date | null>;
  unreachable_why: Generated<string | null>;
  /** The sender's batch id (memex.ingest `batch`) its last version came in: a resent batch is told apart. */
  batch: Generated<string | null>;
}

/** Deleted items: events about them that arrive later are ignored. */
export interface TombstonesTable {
  id: string;
  seq: number;
}

/** The mail views: one row per message (email items without a parent). */
export interface MessagesTable {
  item_id: string;
  account: string;
  origin: string;
  thread_key: string;
  message_id: string | null;
  subject: string;
  from: JsonArray<Address>;
  to: JsonArray<Address>;
  cc: JsonArray<Address>;
  /** The sort key: the message's date, else when it was ingested. */
  date: Date;
  snippet: string;
  mail_labels: string[];
  read: boolean;
  starred: boolean;
  inbox: boolean;
  trashed: boolean;
  attachments: number;
  /** What scope checks need (libs/db visibleTo). */
  kind: string;
  labels: string[];
  spam: boolean;
  seq: number;
}

/** Every Message-ID seen (a message's own, or named by one: a ghost) and its thread (mail/threads.ts). */
export interface ThreadIdsTable {
  id: string;
  thread_key: string;
  /** Sequence of the event that started the thread: of two threads joined, the older keeps its key. */
  first_seq: number;
}

export interface IngestDatabase {
  thread_ids: ThreadIdsTable;
  items: ItemsTable;
  tombstones: TombstonesTable;
  messages: MessagesTable;
}
