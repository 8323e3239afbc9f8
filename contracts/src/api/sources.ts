import { Type } from '@sinclair/typebox';
import type { MethodDefinition } from './method.js';
import { defineMethod, Seq } from './method.js';
import { MediaMode, PassedOver, SOURCE_ID_PATTERN } from '../events/sources.js';

const Label = Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\s,]+$' });
const SourceIdParam = Type.String({ minLength: 1, maxLength: 64, description: 'the source’s id (memex sources list)' });

/** Settings a caller may give when adding or configuring a source (the rest keep their values). */
const SettingsParams = {
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  labels: Type.Optional(Type.Array(Label, { maxItems: 50 })),
  media: Type.Optional(MediaMode),
  in_place_over_bytes: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  rescan_seconds: Type.Optional(Type.Integer({ minimum: 5, maximum: 7 * 24 * 3600 })),
};

export const SourceState = Type.Union([Type.Literal('active'), Type.Literal('paused'), Type.Literal('error')]);

export const SourceSummary = Type.Object({
  id: Type.String(),
  kind: Type.String({ description: 'folder, … ; gmail and calendar for the sync services’ accounts' }),
  name: Type.String(),
  root: Type.Union([Type.String(), Type.Null()], { description: 'its location (file:/…/), null for accounts' }),
  managed_by: Type.String({ description: 'the service that runs it: sources, mail-sync, calendar-sync' }),
  state: SourceState,
  reason: Type.Union([Type.String(), Type.Null()], { description: 'why it is in error (or its root unreachable)' }),
  settings: Type.Union([
    Type.Object({
      labels: Type.Array(Type.String()),
      media: MediaMode,
      in_place_over_bytes: Type.Union([Type.Integer(), Type.Null()]),
      rescan_seconds: Type.Integer(),
    }),
    Type.Null(),
  ]),
  last_scan: Type.Union([
    Type.Object({
      started_at: Type.String(),
      finished_at: Type.String(),
      files: Type.Integer(),
      ingested: Type.Integer(),
      updated: Type.Integer(),
      moved: Type.Integer(),
      removed: Type.Integer(),
      failed: Type.Integer(),
      passed_over: Type.Optional(PassedOver),
    }),
    Type.Null(),
  ]),
  counts: Type.Object({
    files: Type.Integer({ description: 'files that are items' }),
    items: Type.Integer({ description: 'distinct items (identical copies are one item)' }),
    failed: Type.Integer({ description: 'files memex.ingest rejected (memex sources get shows why)' }),
    in_place: Type.Integer({ description: 'items read in place (a location, no copy)' }),
  }),
  backlog: Type.Integer({ description: 'files seen but not yet items (waiting for memex.ingest)' }),
  pipeline_backlog: Type.Optional(
    Type.Integer({
      description:
        'work waiting for its items: jobs on the pipelines (MEMEX_JOBS, every tier) and its photos and videos media has not finished (media’s queue); counted at most every 5 s',
    }),
  ),
  worker: Type.Optional(
    Type.Object(
      {
        folders: Type.Array(Type.String(), { description: 'the folders it serves, as its last heartbeat said' }),
        last_seen: Type.Union([Type.String(), Type.Null()], {
          description: 'its last heartbeat heard by the sources service (null: not heard since that service started)',
        }),
        reachable: Type.Boolean(),
        derives: Type.Boolean({ description: 'it makes media’s thumbnails and keyframes of its files itself' }),
        extracts: Type.Optional(
          Type.Boolean({ description: 'it reads its files’ text, EXIF and OCR itself for ingest (`--extract-jobs`)' }),
        ),
        jobs_waiting: Type.Optional(
          Type.Integer({
            description:
              'the jobs the memex asked of it (extractions, thumbnails and keyframes) running or queued on it, as its last heartbeat said (0 when not heard); part of pipeline_backlog',
          }),
        ),
      },
      {
        description:
          'a `memex worker` (kind worker): what its heartbeats say. Its counts.items and in_place are its items in the read model (right from the start of the sources service); counts.files and failed are its heartbeat’s (its record of its files), the items until heard',
      },
    ),
  ),
});

export const SourcesAdd = defineMethod({
  name: 'memex.sources.add',
  service: 'sources',
  kind: 'command',
  access: 'owner',
  summary:
    'Add a source: a folder on the memex host, watched from now on (its files scanned once, then every change picked up). Photos, videos and audio are read in place by default (media auto). `takeout`: an unpacked Google Takeout (mail with its Gmail labels, Google Photos with sidecars and albums, other files); `photo-library`: a photo export (Apple Photos XMP sidecars, Google Photos folders); both are read again on a rescan, so a newer export unpacked there adds what is new and updates what changed.',
  params: Type.Object({
    kind: Type.Union([Type.Literal('folder'), Type.Literal('takeout'), Type.Literal('photo-library')]),
    path: Type.String({ minLength: 1, description: 'an absolute path on the memex host' }),
    id: Type.Optional(Type.String({ pattern: SOURCE_ID_PATTERN, description: 'default: from the folder’s name' })),
    ...SettingsParams,
  }),
  result: Type.Object({ id: Type.String(), seq: Seq }),
});

export const SourcesList = defineMethod({
  name: 'memex.sources.list',
  service: 'sources',
  kind: 'query',
  access: 'owner',
  summary:
    'Every source: watched folders with their state, counts, last scan, backlog and pipeline backlog, the workers (`memex worker`: folders, last seen, reachable), and the sync services’ accounts (Gmail, Google Calendar).',
  params: Type.Object({}),
  result: Type.Object({ sources: Type.Array(SourceSummary) }),
});

export const SourcesGet = defineMethod({
  name: 'memex.sources.get',
  service: 'sources',
  kind: 'query',
  access: 'owner',
  summary: 'One source with the files it could not ingest and why.',
  params: Type.Object({ id: SourceIdParam }),
  result: Type.Object({
    source: SourceSummary,
    failures: Type.Array(Type.Object({ path: Type.String(), reason: Type.String(), modified_at: Type.String() })),
  }),
});

export const SourcesConfigure = defineMethod({
  name: 'memex.sources.configure',
  service: 'sources',
  kind: 'command',
  access: 'owner',
  summary:
    'Change a source’s settings (name, labels, media, in_place_over_bytes, rescan_seconds); they apply to files ingested from now on.',
  params: Type.Object({ id: SourceIdParam, ...SettingsParams }),
  result: Type.Object({ seq: Seq }),
});

const SourceCommand = (verb: string, summary: string) =>
  defineMethod({
    name: `memex.sources.${verb}`,
    service: 'sources',
    kind: 'command',
    access: 'owner',
    summary,
    params: Type.Object({ id: SourceIdParam }),
    result: Type.Object({ seq: Seq }),
  });

export const SourcesPause = SourceCommand('pause', 'Pause a source: changes are ignored until it is resumed.');
export const SourcesResume = SourceCommand(
  'resume',
  'Resume a paused source: a rescan catches up with what changed meanwhile.',
);

export const SourcesRescan = defineMethod({
  name: 'memex.sources.rescan',
  service: 'sources',
  kind: 'command',
  access: 'owner',
  summary:
    'Compare a source with what the memex holds now, the files it refused before sent again (a worker, `worker.<name>`, is asked to scan its folders); answers when the scan is done, with what it changed.',
  params: Type.Object({ id: SourceIdParam }),
  result: Type.Object({
    files: Type.Integer(),
    ingested: Type.Integer(),
    updated: Type.Integer(),
    moved: Type.Integer(),
    removed: Type.Integer(),
    failed: Type.Integer(),
    seq: Seq,
  }),
});

export const SourcesRemove = defineMethod({
  name: 'memex.sources.remove',
  service: 'sources',
  kind: 'command',
  access: 'owner',
  summary:
    'Stop watching a source. Its items stay unless delete_items is set (then each is deleted with what derives from it).',
  params: Type.Object({ id: SourceIdParam, delete_items: Type.Optional(Type.Boolean({ default: false })) }),
  result: Type.Object({ deleted_items: Type.Integer(), seq: Seq }),
});

/** API methods of the sources area. */
export const sourceMethods: MethodDefinition[] = [
  SourcesAdd,
  SourcesList,
  SourcesGet,
  SourcesConfigure,
  SourcesPause,
  SourcesResume,
  SourcesRescan,
  SourcesRemove,
];
