import { Type, type Static } from '@sinclair/typebox';
import { readMarkdown } from '@memex/markdown';
import { defineEvent, ULID_PATTERN } from './envelope.js';
import { metaByKind, WikiLink, type CalendarMeta, type PdfMeta } from './meta.js';

const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$' });

/** What every item.ingested says of its item, whatever its kind. */
const ItemFields = {
  revision: Type.Integer({ minimum: 1 }),
  title: Type.String(),
  source: Type.Object({ kind: Type.String(), id: Type.String() }, { additionalProperties: false }),
  external_id: Type.Union([Type.String(), Type.Null()]),
  /** The handler's dedupe key: `message-id:<id>`, `sha256:<hex>`, `doi:<doi>`. */
  identity: Type.String(),
  /**
   * Other identities the item is known by (a paper's DOI beside its arXiv id): the same item
   * arriving under one of them is this one. Released with the item on deletion.
   */
  aliases: Type.Optional(Type.Array(Type.String())),
  /** `imported` through memex.ingest, `mirrored` by a connector that writes changes back. */
  origin: Type.Union([Type.Literal('imported'), Type.Literal('mirrored')]),
  content_type: Type.String(),
  /** The original bytes' hash; they are in the blob store unless the item has a location. */
  content_sha256: Sha256,
  size: Type.Integer({ minimum: 0 }),
  /**
   * Where the original bytes live when the memex keeps no copy (seed §4.1 location_ref:
   * file:/abs/path, worker:<name>:/abs/path); absent for items whose bytes are blobs.
   */
  location: Type.Optional(Type.String()),
  text_sha256: Sha256,
  text_length: Type.Integer({ minimum: 0 }),
  /** The item this one came out of (an attachment's message). */
  parent_id: Type.Optional(Type.String({ pattern: ULID_PATTERN })),
};

/** The kinds of item the ingest handlers produce (seed §4.1). */
export type ItemKind = keyof typeof metaByKind;

/** An item of one kind, with that kind's meta (handler-specific structure: mail headers, pages, links…). */
const itemOf = <K extends ItemKind>(kind: K) =>
  Type.Object(
    // The kind before the rest: a check of another kind's branch stops there.
    { kind: Type.Literal(kind), id: Type.String({ pattern: ULID_PATTERN }), ...ItemFields, meta: metaByKind[kind] },
    { additionalProperties: false },
  );

/** item.ingested's data: a union on `kind`, so `data.kind === 'email'` types `data.meta` as an email's. */
export const ItemIngestedData = Type.Union([
  itemOf('email'),
  itemOf('attachment'),
  itemOf('document'),
  itemOf('paper'),
  itemOf('photo'),
  itemOf('video'),
  itemOf('audio'),
  itemOf('event'),
  itemOf('contact'),
  itemOf('session_digest'),
  itemOf('web'),
]);

/**
 * An item entered the memex or changed (a document with new content). The item's text and
 * original bytes live in blobs (personal content stays out of the log's payloads where it can),
 * so consumers read `text_sha256` from the blob store. Subject item:<id>; the envelope's
 * occurred_at is when it happened in the world (mail Date, file time). Its meta is typed by kind
 * (meta.ts): the schema declares what the handlers wrote from v1 on, so v1 events read as they are.
 */
export const ItemIngested = defineEvent({
  type: 'item.ingested',
  owner: 'ingest',
  v: 1,
  description: 'An item was created, or replaced by new content (revision > 1). Its text and bytes are in blobs.',
  data: ItemIngestedData,
});

type ItemData = Static<typeof ItemIngestedData>;

/** item.ingested's data for an item of one kind (`ItemDataOf<'email'>`: an email's, its meta typed). */
export type ItemDataOf<K extends ItemKind> = Extract<ItemData, { kind: K }>;

/** An item's kind with its meta, as one value (what a handler's reading becomes in the event). */
export type KindAndMeta = ItemData extends infer D ? (D extends ItemData ? Pick<D, 'kind' | 'meta'> : never) : never;

/** The PDF an item is (a PDF document or paper) or holds (a PDF attachment read as a document), or null. */
export function pdfMetaOf(data: ItemData): PdfMeta | null {
  const document =
    data.kind === 'attachment'
      ? data.meta.document
      : data.kind === 'document' || data.kind === 'paper'
        ? data.meta
        : null;
  return document?.format === 'pdf' ? document : null;
}

/** The calendar an item is (a calendar file) or carries (an invitation part of a message), or null. */
export function calendarOf(data: ItemData): CalendarMeta | null {
  return data.kind === 'event' ? data.meta : data.kind === 'attachment' ? (data.meta.calendar ?? null) : null;
}

/** What a note's Markdown says about itself, read once where the note is written (@memex/markdown). */
export const NoteMarkdown = Type.Object(
  {
    frontMatter: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    links: Type.Array(WikiLink),
    tags: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);
export type NoteMarkdown = Static<typeof NoteMarkdown>;

/** A note's Markdown as `note.put` carries it. */
export function noteMarkdownOf(body: string): NoteMarkdown {
  const { frontMatter, links, tags } = readMarkdown(body);
  return { frontMatter, links, tags };
}

const NoteFields = {
  id: Type.String({ pattern: ULID_PATTERN }),
  title: Type.String(),
  body: Type.String(),
  /** Set when this put replaced an earlier version. */
  replaces: Type.Optional(Type.Boolean()),
};

/** v1 carried the body only: every reader parsed it again. */
export const NotePutV1 = defineEvent({
  type: 'note.put',
  owner: 'ingest',
  v: 1,
  description: 'A note was written or replaced (v1: without its parsed Markdown).',
  data: Type.Object(NoteFields, { additionalProperties: false }),
  upcast: (data) => ({ ...data, markdown: noteMarkdownOf(data.body) }),
});

/**
 * A note: an insight or a remark written by the owner or an agent. Put again with the same id
 * to replace its body (its earlier versions are superseded, not kept as separate items). It
 * carries its front matter, [[links]] and #tags, read by the same reader as Markdown documents.
 */
export const NotePut = defineEvent({
  type: 'note.put',
  owner: 'ingest',
  v: 2,
  description:
    'A note was written or replaced, with its front matter, links and tags. Subject item:<id>; who wrote it is the actor.',
  data: Type.Object({ ...NoteFields, markdown: NoteMarkdown }, { additionalProperties: false }),
});

/** An item is gone with everything derived from it; its earlier events have been erased from the log. */
export const ItemDeleted = defineEvent({
  type: 'item.deleted',
  owner: 'ingest',
  v: 1,
  description:
    'An item was deleted. Every read model drops it and all that derives from it; events about it that arrive later are ignored.',
  data: Type.Object(
    {
      id: Type.String({ pattern: ULID_PATTERN }),
    },
    { additionalProperties: false },
  ),
});

export const itemEvents = [ItemIngested, NotePutV1, NotePut, ItemDeleted];
