import type { ColumnType, Selectable } from 'kysely';
import type { DataOf, MboxTail, PassedOver, SourceScanned, SourceSettings } from '@memex/contracts';
import type { Static } from '@sinclair/typebox';

type Json<T> = ColumnType<T, string, string>;

export type Settings = Static<typeof SourceSettings>;
export type LastScan = Omit<DataOf<typeof SourceScanned>, 'id'> & { finished_at: string };

/** A source and its state (all from its events). */
export interface SourcesTable {
  id: string;
  kind: string;
  /** Its root location; a folder's ends with `/`. */
  root: string;
  settings: Json<Settings>;
  paused: boolean;
  /** Why it is in error (source.errored), until a scan completes. */
  error: string | null;
  /** Set while its root cannot be read (location.unreachable). */
  unreachable_since: Date | null;
  unreachable_why: string | null;
  last_scan: Json<LastScan | null>;
  added_at: Date;
  seq: number;
}

/** A source as queries read it. */
export type SourceRow = Selectable<SourcesTable>;

/** Path → item: what a file of a source is in the memex (or why it is not). */
export interface FilesTable {
  source_id: string;
  /** Relative to the root, `/`-separated. */
  path: string;
  /** Null for a file memex.ingest rejected. */
  item_id: string | null;
  external_id: string | null;
  sha256: string | null;
  in_place: boolean;
  size: number;
  modified_at: Date;
  rejected: string | null;
  /** An mbox read through (source.mailbox_read); its messages are the rows at `<path>#<id>`. */
  mailbox: ColumnType<boolean, boolean | undefined, boolean>;
  /** An mbox's last message and a digest of the bytes before it: where a read of it grown starts. */
  mbox_tail: ColumnType<MboxTail | null, string | null | undefined, string | null>;
  /** It went (source.file_leaving): since when its item waits to be deleted. */
  leaving_since: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** A zip or an Evernote export read as its members (source.archive_read, with `mailbox` set). */
  archive: ColumnType<'zip' | 'enex' | null, 'zip' | 'enex' | null | undefined, 'zip' | 'enex' | null>;
  /** What of that archive was passed over, by why (counted again by each whole scan while it is unchanged). */
  archive_passed_over: ColumnType<Static<typeof PassedOver> | null, string | null | undefined, string | null>;
  seq: number;
}

/** An item whose original is on a worker (`worker:<name>:/…`, its location in item.ingested). */
export interface WorkerItemsTable {
  item_id: string;
  worker: string;
  location: string;
  seq: number;
}

export interface SourcesDatabase {
  sources: SourcesTable;
  files: FilesTable;
  worker_items: WorkerItemsTable;
}
