import { Type, type Static } from '@sinclair/typebox';
import { readMarkdown } from '@memex/markdown';
import { defineEvent, ULID_PATTERN } from './envelope.js';

const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$' });

export const ItemKind = Type.String({
  description: 'email, attachment, document, paper, note, photo, video, audio, web, session_digest, output, event',
});

/** An email address with its display name, as a handler read it. */
export const Address = Type.Object({ name: Type.String(), address: Type.String() }, { additionalProperties: false });

/** A `[[target#heading|alias]]` (or `![[embed]]`) in Markdown. */
export const WikiLink = Type.Object({
  target: Type.String(),
  heading: Type.Union([Type.String(), Type.Null()]),
  alias: Type.Union([Type.String(), Type.Null()]),
  embed: Type.Boolean(),
});

/**
 * An item entered the memex or changed (a document with new content). The item's text and
 * original bytes live in blobs (personal content stays out of the log's payloads where it can),
 * so consumers read `text_sha256` from the blob store. Subject item:<id>; the envelope's
 * occurred_at is when it happened in the world (mail Date, file time).
 */
export const ItemIngested = defineEvent({
  type: 'item.ingested',
  owner: 'ingest',
  v: 1,
  description: 'An item was created, or replaced by new content (revision > 1). Its text and bytes are in blobs.',
  data: Type.Object(
    {
      id: Type.String({ pattern: ULID_PATTERN }),
      kind: ItemKind,
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
      /** Handler-specific structure (mail headers and flags, pages, front matter, links, tags…). */
      meta: Type.Record(Type.String(), Type.Unknown()),
    },
    { additionalProperties: false },
  ),
});

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
