import { Type, type Static } from '@sinclair/typebox';
import { defineEvent, ULID_PATTERN } from './envelope.js';

/** A source's id: chosen from its name when added (`papers`, `photos-2`); also the item's `source.id`. */
export const SOURCE_ID_PATTERN = '^[a-z0-9][a-z0-9._-]{0,63}$';
const SourceId = Type.String({ pattern: SOURCE_ID_PATTERN });

/**
 * Where an item's bytes live when the memex keeps no copy of them (seed §4.1 location_ref):
 * `file:/abs/path` on the memex host, `worker:<name>:/abs/path` on a worker (libs/locations).
 */
export const LocationRef = Type.String({
  minLength: 6,
  maxLength: 4096,
  pattern: '^[a-z][a-z0-9+.-]*:',
  description: 'file:/abs/path on the memex host, or worker:<name>:/abs/path on a worker',
});

/** How a folder's files are kept: `in-place` keeps only a location and derived data, `copy` stores the bytes as blobs. */
export const MediaMode = Type.Union([Type.Literal('auto'), Type.Literal('in-place'), Type.Literal('copy')], {
  description:
    '`auto`: photos, videos and audio (and files over in_place_over_bytes) in place, the rest copied; `in-place`: every file in place; `copy`: every file copied into the blob store',
});

export const SourceSettings = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    labels: Type.Array(Type.String(), { description: 'scope labels every item of the source gets' }),
    media: MediaMode,
    in_place_over_bytes: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
      description: 'with media auto: any file at least this large is read in place too',
    }),
    rescan_seconds: Type.Integer({ minimum: 5, description: 'the safety-net rescan interval' }),
    /** Settings of the kind (an export's options, …), free-form. */
    options: Type.Record(Type.String(), Type.Unknown()),
  },
  { additionalProperties: false },
);

/** A source was added. Subject source:<id>. */
export const SourceAdded = defineEvent({
  type: 'source.added',
  owner: 'sources',
  v: 1,
  description: 'A source was added: a watched folder (or another kind) with its settings. Subject source:<id>.',
  data: Type.Object(
    {
      id: SourceId,
      kind: Type.String({ pattern: '^[a-z][a-z0-9_-]{0,63}$', description: 'folder, takeout, photo-library, …' }),
      /** Its root: a folder ends with `/` (`file:/home/me/Papers/`). */
      root: LocationRef,
      settings: SourceSettings,
    },
    { additionalProperties: false },
  ),
});

export const SourceConfigured = defineEvent({
  type: 'source.configured',
  owner: 'sources',
  v: 1,
  description: 'A source’s settings changed (the whole new settings). Subject source:<id>.',
  data: Type.Object({ id: SourceId, settings: SourceSettings }, { additionalProperties: false }),
});

export const SourcePaused = defineEvent({
  type: 'source.paused',
  owner: 'sources',
  v: 1,
  description: 'A source stopped picking up changes until it is resumed. Subject source:<id>.',
  data: Type.Object({ id: SourceId }, { additionalProperties: false }),
});

export const SourceResumed = defineEvent({
  type: 'source.resumed',
  owner: 'sources',
  v: 1,
  description: 'A paused source picks up changes again (after a rescan that catches up). Subject source:<id>.',
  data: Type.Object({ id: SourceId }, { additionalProperties: false }),
});

export const SourceRemoved = defineEvent({
  type: 'source.removed',
  owner: 'sources',
  v: 1,
  description: 'A source was removed; its items were deleted too when `items_deleted`. Subject source:<id>.',
  data: Type.Object({ id: SourceId, items_deleted: Type.Boolean() }, { additionalProperties: false }),
});

/**
 * Files a whole scan saw and sends nowhere, by why (no handler takes their type; another command
 * reads them): the watched folder's account of every file, as an import's summary is.
 */
export const PassedOver = Type.Array(
  Type.Object(
    {
      reason: Type.String({ minLength: 1, maxLength: 500 }),
      count: Type.Integer({ minimum: 1 }),
      examples: Type.Array(Type.String({ maxLength: 4096 }), { maxItems: 3 }),
    },
    { additionalProperties: false },
  ),
  { maxItems: 100 },
);

/** A scan compared the source with what the memex holds. Subject source:<id>. */
export const SourceScanned = defineEvent({
  type: 'source.scanned',
  owner: 'sources',
  v: 1,
  description: 'A scan of a source finished: what it saw and what it changed. Subject source:<id>.',
  data: Type.Object(
    {
      id: SourceId,
      started_at: Type.String({ format: 'date-time' }),
      files: Type.Integer({ minimum: 0, description: 'files seen' }),
      ingested: Type.Integer({ minimum: 0 }),
      updated: Type.Integer({ minimum: 0 }),
      moved: Type.Integer({ minimum: 0 }),
      removed: Type.Integer({ minimum: 0 }),
      failed: Type.Integer({ minimum: 0 }),
      passed_over: Type.Optional(PassedOver),
    },
    { additionalProperties: false },
  ),
});

/**
 * A source cannot work (its root unreadable for a reason other than being away, ingest
 * unavailable…); cleared by the next scan that completes. Subject source:<id>.
 */
export const SourceErrored = defineEvent({
  type: 'source.errored',
  owner: 'sources',
  v: 1,
  description: 'A source is in error, with the reason; the next completed scan clears it. Subject source:<id>.',
  data: Type.Object({ id: SourceId, reason: Type.String() }, { additionalProperties: false }),
});

const FileFacts = {
  source_id: SourceId,
  /** Relative to the source's root, `/`-separated. */
  path: Type.String({ minLength: 1 }),
  size: Type.Integer({ minimum: 0 }),
  modified_at: Type.String({ format: 'date-time' }),
};

/**
 * A file of a source is (now) the item: new, changed (same item, new revision) or found again
 * after a restart. Subject item:<item id>, so deleting the item erases its paths from the log.
 */
export const SourceFileRecorded = defineEvent({
  type: 'source.file_recorded',
  owner: 'sources',
  v: 1,
  description: 'A file of a source is the item (new or changed). Subject item:<id>.',
  data: Type.Object(
    {
      ...FileFacts,
      item_id: Type.String({ pattern: ULID_PATTERN }),
      sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
      /** The item's external_id under the source: kept when the file moves or changes. */
      external_id: Type.String({ minLength: 1 }),
      /** Whether the item holds a location (read in place) rather than a copy. */
      in_place: Type.Boolean(),
    },
    { additionalProperties: false },
  ),
});

/** A file moved or was renamed within its source: the same item, a new path. Subject item:<item id>. */
export const SourceFileMoved = defineEvent({
  type: 'source.file_moved',
  owner: 'sources',
  v: 1,
  description: 'A file moved within its source; its item stays. Subject item:<id>.',
  data: Type.Object(
    {
      source_id: SourceId,
      item_id: Type.String({ pattern: ULID_PATTERN }),
      from: Type.String({ minLength: 1 }),
      to: Type.String({ minLength: 1 }),
      modified_at: Type.String({ format: 'date-time' }),
    },
    { additionalProperties: false },
  ),
});

/**
 * A path no longer names its item while the item stays (another copy of the same bytes is
 * still in the folder), or a rejected file went away. A file whose item goes is dropped by
 * `item.deleted`. Subject item:<item id>, or source:<id> without an item.
 */
export const SourceFileDropped = defineEvent({
  type: 'source.file_dropped',
  owner: 'sources',
  v: 1,
  description: 'A file of a source went away while its item (if any) stays. Subject item:<id> or source:<id>.',
  data: Type.Object(
    {
      source_id: SourceId,
      path: Type.String({ minLength: 1 }),
      item_id: Type.Union([Type.String({ pattern: ULID_PATTERN }), Type.Null()]),
    },
    { additionalProperties: false },
  ),
});

/**
 * A file (or a message of an mbox) of a source went, and no other path of the source holds its
 * item: the item is kept a while (MEMEX_SOURCES_GONE_GRACE_SECONDS) before it is deleted, in case
 * it comes back or turns up elsewhere in the source: a move that a sync tool (mbsync, offlineimap,
 * a file sync) writes as a deletion, then a copy, keeps its item. A later scan deletes it, or
 * records it where it is now. Subject item:<item id>.
 */
export const SourceFileLeaving = defineEvent({
  type: 'source.file_leaving',
  owner: 'sources',
  v: 1,
  description: 'A file of a source went; its item is deleted unless it comes back soon. Subject item:<id>.',
  data: Type.Object(
    {
      source_id: SourceId,
      path: Type.String({ minLength: 1 }),
      item_id: Type.String({ pattern: ULID_PATTERN }),
      since: Type.String({ format: 'date-time', description: 'when a scan first found it gone' }),
    },
    { additionalProperties: false },
  ),
});

/**
 * Where the next read of an mbox may start if the file has only grown since: its last message, and
 * a digest of every byte before it. Mail clients append new mail; a file whose bytes before that
 * message are the same is read from there on, not through from its start.
 */
export const MboxTail = Type.Object(
  {
    offset: Type.Integer({ minimum: 0, description: "byte offset of the mbox's last message (its From line)" }),
    before_sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'sha256 of the bytes before it' }),
    message: Type.String({ minLength: 1, description: 'the path `<mbox path>#<message id>` of the message there' }),
  },
  { additionalProperties: false },
);
export type MboxTail = Static<typeof MboxTail>;

/**
 * An mbox of a watched folder was read: its messages are recorded each at
 * `<mbox path>#<message id>` (source.file_recorded), and this is the mbox itself, so a scan reads
 * it again only when its size or time changes. Subject source:<id>.
 */
export const SourceMailboxRead = defineEvent({
  type: 'source.mailbox_read',
  owner: 'sources',
  v: 1,
  description: 'An mbox of a source was read (its messages are recorded one by one). Subject source:<id>.',
  data: Type.Object(
    {
      ...FileFacts,
      messages: Type.Integer({ minimum: 0, description: 'messages it holds (expunged ones left out)' }),
      read_from: Type.Optional(
        Type.Integer({ minimum: 0, description: 'the byte it was read from: 0, or the last message of a grown mbox' }),
      ),
      tail: Type.Optional(MboxTail),
    },
    { additionalProperties: false },
  ),
});

/**
 * A zip or an Evernote export of a watched folder was read: its members (a zip's files at
 * `<zip path>/<path in the zip>`, an export's notes and their attachments at
 * `<export path>#<note>` and `<export path>#<note>/<file name>`) are recorded one by one
 * (source.file_recorded, source.file_rejected), and this is the archive itself, so a scan reads it
 * again only when its size or time changes; what of it was sent nowhere is kept with it, so each
 * whole scan accounts for every member. Subject source:<id>.
 */
export const SourceArchiveRead = defineEvent({
  type: 'source.archive_read',
  owner: 'sources',
  v: 1,
  description:
    'A zip or an Evernote export of a source was read (its members are recorded one by one). Subject source:<id>.',
  data: Type.Object(
    {
      ...FileFacts,
      archive: Type.Union([Type.Literal('zip'), Type.Literal('enex')]),
      members: Type.Integer({ minimum: 0, description: 'members it holds that are items or were refused' }),
      sent: Type.Integer({ minimum: 0, description: 'members sent to memex.ingest by this read (new or changed)' }),
      unchanged: Type.Integer({ minimum: 0, description: 'members known as they are, not sent again' }),
      passed_over: PassedOver,
      damaged: Type.Optional(
        Type.String({ minLength: 1, maxLength: 2000, description: 'why it could be read only in part' }),
      ),
    },
    { additionalProperties: false },
  ),
});

/** memex.ingest rejected a file: it is not retried until it changes. Subject source:<id>. */
export const SourceFileRejected = defineEvent({
  type: 'source.file_rejected',
  owner: 'sources',
  v: 1,
  description: 'A file of a source could not become an item, with the reason. Subject source:<id>.',
  data: Type.Object({ ...FileFacts, reason: Type.String() }, { additionalProperties: false }),
});

/**
 * Items located under `prefix` cannot be read now (a volume unmounted, a worker away): they are
 * kept and say so. The sources service is the one observer of locations (its watchers, and the
 * workers that report to it). Subject source:<id>.
 */
export const LocationUnreachable = defineEvent({
  type: 'location.unreachable',
  owner: 'sources',
  v: 1,
  description:
    'Items located under a prefix (a folder location ending in /, or one location) cannot be read now, with why. Subject source:<id>.',
  data: Type.Object({ source_id: SourceId, prefix: LocationRef, why: Type.String() }, { additionalProperties: false }),
});

export const LocationReachable = defineEvent({
  type: 'location.reachable',
  owner: 'sources',
  v: 1,
  description: 'Items located under a prefix can be read again. Subject source:<id>.',
  data: Type.Object({ source_id: SourceId, prefix: LocationRef }, { additionalProperties: false }),
});

export const sourceEvents = [
  SourceAdded,
  SourceConfigured,
  SourcePaused,
  SourceResumed,
  SourceRemoved,
  SourceScanned,
  SourceErrored,
  SourceFileRecorded,
  SourceFileMoved,
  SourceFileDropped,
  SourceFileLeaving,
  SourceFileRejected,
  SourceMailboxRead,
  SourceArchiveRead,
  LocationUnreachable,
  LocationReachable,
];
