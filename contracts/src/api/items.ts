import { Type } from '@sinclair/typebox';
import { defineMethod, Seq } from './method.js';
import { ULID_PATTERN } from '../events/envelope.js';

const Label = Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\s,]+$' });

export const Item = Type.Object({
  id: Type.String(),
  kind: Type.String({ description: 'email, attachment, document, paper, note, photo, video, audio, web, …' }),
  title: Type.String(),
  text: Type.String({ description: 'the searchable text' }),
  labels: Type.Array(Type.String()),
  source: Type.Object({ kind: Type.String(), id: Type.String() }),
  occurred_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  added_at: Type.String({ format: 'date-time' }),
  made_by: Type.Object({ kind: Type.String(), id: Type.String() }),
  meta: Type.Record(Type.String(), Type.Unknown()),
  spam: Type.Boolean(),
  origin: Type.Union([Type.Literal('imported'), Type.Literal('mirrored'), Type.Null()], {
    description: 'null for what the memex made itself (notes)',
  }),
  content_type: Type.Union([Type.String(), Type.Null()], {
    description: 'the original bytes’ type (memex.items.content)',
  }),
  size: Type.Union([Type.Integer(), Type.Null()]),
  location: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description: 'where the original bytes live when the memex keeps no copy (file:/…, worker:<name>:/…)',
    }),
  ),
  unreachable: Type.Optional(
    Type.Union(
      [
        Type.Object({
          since: Type.String({ format: 'date-time' }),
          why: Type.String(),
        }),
        Type.Null(),
      ],
      { description: 'set while the location cannot be read (a volume unmounted, a worker away); the item is kept' },
    ),
  ),
  revision: Type.Integer({ minimum: 1 }),
  parent_id: Type.Union([Type.String(), Type.Null()], {
    description: 'the item this one came out of (an attachment’s message)',
  }),
  summary: Type.Optional(
    Type.Union([Type.Object({ text: Type.String(), made_by: Type.String() }), Type.Null()], {
      description: 'a chat model’s summary (tier 2) and its maker, once one has been made',
    }),
  ),
  place: Type.Optional(
    Type.Union([Type.Object({ key: Type.String(), name: Type.String(), country: Type.String() }), Type.Null()], {
      description: 'where a photo or video was taken, as the media pipeline placed it (a GeoNames place)',
    }),
  ),
});

export const NotesPut = defineMethod({
  name: 'memex.notes.put',
  service: 'ingest',
  kind: 'command',
  access: 'any',
  summary: 'Write a note (an insight or a remark), attributed to the caller. Pass an id to replace one.',
  params: Type.Object({
    id: Type.Optional(Type.String({ pattern: ULID_PATTERN })),
    title: Type.Optional(Type.String({ maxLength: 500 })),
    body: Type.String({ minLength: 1, maxLength: 1_000_000 }),
    labels: Type.Optional(Type.Array(Label, { maxItems: 50 })),
  }),
  result: Type.Object({ id: Type.String(), seq: Seq }),
});

export const ItemsGet = defineMethod({
  name: 'memex.items.get',
  service: 'ingest',
  kind: 'query',
  access: 'any',
  summary: 'One item by id, within the caller’s scope.',
  params: Type.Object({ id: Type.String({ minLength: 1 }) }),
  result: Item,
});
