import type { Actor, Ingest, ParamsOf } from '@memex/contracts';
import type { ClientMarks } from '@memex/exports';
import type { DiskFile, KnownFile } from '../domain/files.js';

/** What a watched folder sends memex.ingest, and how: shared by the folder's files and its mailboxes. */

export type ItemParams = ParamsOf<typeof Ingest>['items'][number];

/** One file (or message of an mbox) on its way into memex.ingest, and what to record once it answers. */
export interface Work {
  file: DiskFile;
  sha256: string;
  externalId: string;
  inPlace: boolean;
  item: ItemParams;
  /** Set when the file is a known item that moved here (the event to publish is file_moved). */
  movedFrom?: KnownFile;
  /** The bytes to send when they are not the file's: a message of an mbox, a `.partial.emlx` made whole. */
  data?: Buffer;
  /** A message of an mbox: what its client marked in its header, for a copy ingest holds already. */
  marks?: ClientMarks;
  dataBytes: number;
}

/** What memex.ingest made of a work: its item, and whether it was new, changed or known already. */
export interface Answered {
  work: Work;
  id: string;
  status: 'created' | 'updated' | 'duplicate';
}

/** Items per memex.ingest request, and the item data one carries (under the 40 MB limit). */
export const BATCH_ITEMS = 200;
export const BATCH_BYTES = 24 * 1024 * 1024;

/** Who the sources service is when it calls memex.ingest: its items are `import`ed by it. */
export const CALLER: Actor = { kind: 'system', id: 'sources' };
