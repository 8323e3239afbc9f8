import { Type } from '@sinclair/typebox';
import type { MethodDefinition } from './method.js';
import { defineMethod, Seq } from './method.js';

/** The most item data one memex.ingest request carries (decoded bytes and text, summed). */
export const INGEST_REQUEST_LIMIT_BYTES = 40 * 1024 * 1024;

/**
 * One item of a batch. Only JSON types are checked for the whole request; everything about the
 * item itself (its type, base64, size, attributes, source, labels) is checked per item, so one bad
 * item is rejected with its reason and the rest of the batch goes in.
 */
export const IngestItem = Type.Object(
  {
    type: Type.String({
      description:
        'The MIME type (message/rfc822, application/pdf, text/markdown, …); it picks the handler (memex.types).',
    }),
    data: Type.Optional(Type.String({ description: 'The item’s bytes in its standard format, base64.' })),
    text: Type.Optional(Type.String({ description: 'Instead of data: the content as text (sent as UTF-8).' })),
    location: Type.Optional(
      Type.String({
        description:
          'Instead of data or text, for a file read in place: where its bytes live (file:/abs/path on the memex host, worker:<name>:/abs/path). The memex reads it for extraction and stores only derived data, never a copy; memex.items.content reads it from there. A new location with the same content updates the item (a moved file). Owner only.',
      }),
    ),
    source: Type.Object(
      {
        kind: Type.String({
          description:
            'What kind of source, e.g. mbox, maildir, folder. The item’s source becomes import:<kind>[:<id>]; connector namespaces (gmail, …) are refused.',
        }),
        id: Type.Optional(Type.String({ description: 'Which one, e.g. archive-2009.' })),
      },
      { additionalProperties: false },
    ),
    external_id: Type.Optional(
      Type.String({ description: 'The source’s own id for the item; re-sending it is harmless.' }),
    ),
    attributes: Type.Optional(
      Type.Unknown({
        description: 'Facts not inside the bytes, checked against the handler’s strict schema (memex.types).',
      }),
    ),
    labels: Type.Optional(Type.Array(Type.String(), { description: 'Scope labels: which sessions may see the item.' })),
  },
  { additionalProperties: false },
);

export const IngestStatus = Type.Union(
  (['created', 'updated', 'duplicate', 'rejected'] as const).map((s) => Type.Literal(s)),
);

export const IngestResult = Type.Object({
  status: IngestStatus,
  /** The item: new, updated, or the one this is a duplicate of. */
  id: Type.Optional(Type.String()),
  /** Why the item was rejected, written for whoever sent it. */
  reason: Type.Optional(Type.String()),
  /** Problems met while reading an accepted item (a truncated message, a broken part). */
  warnings: Type.Optional(Type.Array(Type.String())),
});

export const Ingest = defineMethod({
  name: 'memex.ingest',
  service: 'ingest',
  kind: 'command',
  access: 'any',
  summary:
    'Put a batch of items in, each typed by its MIME type. One result per item, in order: created, updated (a document, photo or calendar sent again under its source and external_id with new content or new labels), duplicate (with the existing id) or rejected (with the reason). A batch never fails because of one item; a request carries at most 40 MB of item data. A batch sent again under its `batch` id (its answer lost to a timeout) is answered as its first send was, not with duplicates.',
  params: Type.Object({
    items: Type.Array(IngestItem, { minItems: 1, maxItems: 5000 }),
    batch: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'An id the sender gives this batch and gives again when it sends the batch again (its answer was lost to a timeout): an item the earlier send created or updated is answered created or updated again, with the same id, not duplicate.',
      }),
    ),
  }),
  result: Type.Object({ results: Type.Array(IngestResult), seq: Seq }),
});

export const HandlerInfo = Type.Object({
  name: Type.String(),
  types: Type.Array(Type.String(), { description: 'MIME types it accepts' }),
  attributes: Type.Record(Type.String(), Type.Unknown(), { description: 'strict JSON Schema of its attributes' }),
  identity: Type.String({ description: 'how it recognises an item it already has' }),
  limit_bytes: Type.Integer({ description: 'the largest item it takes' }),
  produces: Type.Array(Type.String(), { description: 'the item kinds it creates' }),
  updatable: Type.Boolean({ description: 'whether new content under a known source + external_id updates the item' }),
});

export const Types = defineMethod({
  name: 'memex.types',
  service: 'ingest',
  kind: 'query',
  access: 'any',
  summary:
    'The handler registry: MIME types, attribute schemas, identity rules, limits and what each handler produces.',
  params: Type.Object({}),
  result: Type.Object({ handlers: Type.Array(HandlerInfo), request_limit_bytes: Type.Integer() }),
});

/** The most bytes one memex.items.content answer carries; larger items are read in ranges. */
export const CONTENT_CHUNK_BYTES = 4 * 1024 * 1024;

export const ItemsContent = defineMethod({
  name: 'memex.items.content',
  service: 'ingest',
  kind: 'query',
  access: 'any',
  summary:
    'An item’s original bytes (the raw message, the uploaded file), base64, within the caller’s scope; read large items in ranges.',
  params: Type.Object({
    id: Type.String({ minLength: 1 }),
    offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
    length: Type.Optional(Type.Integer({ minimum: 1, maximum: CONTENT_CHUNK_BYTES, default: CONTENT_CHUNK_BYTES })),
  }),
  result: Type.Object({
    id: Type.String(),
    content_type: Type.String(),
    filename: Type.Union([Type.String(), Type.Null()], {
      description: 'a safe base name to save under (no folders, no control characters), or null',
    }),
    original_filename: Type.Union([Type.String(), Type.Null()], { description: 'the file name as it arrived' }),
    size: Type.Integer({ description: 'the whole item’s size in bytes' }),
    offset: Type.Integer(),
    data: Type.String({ description: 'base64 of bytes [offset, offset + length)' }),
    next_offset: Type.Union([Type.Integer(), Type.Null()], {
      description: 'where the next range starts, or null at the end',
    }),
  }),
});

export const ItemsDelete = defineMethod({
  name: 'memex.items.delete',
  service: 'ingest',
  kind: 'command',
  access: 'owner',
  summary:
    'Delete an item and everything derived from it: its attachments, its events (erased from the log), its blobs (unless another item shares them); every read model drops it on item.deleted.',
  params: Type.Object({ id: Type.String({ minLength: 1 }) }),
  result: Type.Object({
    deleted: Type.Array(Type.String(), { description: 'the item and its children' }),
    erased_events: Type.Integer({
      description: 'events about them erased from the log, and their identity claims released',
    }),
    seq: Seq,
  }),
});

/** API methods of the ingest area. */
export const ingestMethods: MethodDefinition[] = [Ingest, Types, ItemsContent, ItemsDelete];
