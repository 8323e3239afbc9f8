import { Type } from '@sinclair/typebox';
import { defineEvent, ULID_PATTERN, type EventDefinition } from './envelope.js';

/** A model id plus version, e.g. `glove-100d-sif@2`, `model2vec:potion-base-8M@1a2b3c4d`. */
export const Space = Type.String({ minLength: 1, maxLength: 300 });

/** Which pipeline (and version) produced a derived fact, e.g. `text@1`. */
const Pipeline = Type.String({ pattern: '^[a-z][a-z0-9_-]*@[0-9A-Za-z.+_-]+$' });

/** Events that are one of several pieces (kept under the log's 1 MB message limit). */
const Piece = {
  /** 0-based index of this piece and how many pieces make the whole. */
  piece: Type.Integer({ minimum: 0 }),
  pieces: Type.Integer({ minimum: 1 }),
};

export const Part = Type.Object(
  {
    ordinal: Type.Integer({ minimum: 0 }),
    /** `passage` for prose; `section`, `ocr`, `caption`, `transcript_segment`, `frame` come with later tiers. */
    kind: Type.String(),
    text: Type.String(),
    /** Character offsets [start, end) into the item's text. */
    start: Type.Integer({ minimum: 0 }),
    end: Type.Integer({ minimum: 0 }),
    /** The PDF page (from 1) the passage lies on, when the item has pages. */
    page: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);

/**
 * Tier 1 split an item's text into passages. Subject item:<id>; the envelope carries the item's
 * labels, kind and spam flag, since the parts reveal its text. A newer revision replaces every
 * part of an older one.
 */
export const PartExtracted = defineEvent({
  type: 'part.extracted',
  owner: 'pipelines',
  v: 1,
  description:
    "An item's text split into passages (one piece of the list; all pieces share item, revision and pipeline).",
  data: Type.Object(
    {
      item_id: Type.String({ pattern: ULID_PATTERN }),
      revision: Type.Integer({ minimum: 1 }),
      pipeline: Pipeline,
      /** How many parts the item has in all (over every piece). */
      total: Type.Integer({ minimum: 0 }),
      ...Piece,
      parts: Type.Array(Part),
    },
    { additionalProperties: false },
  ),
});

/**
 * Vectors of an item's parts in one embedding space, as base64 of little-endian float32,
 * L2-normalized. Piece 0 also carries the item-level vector (the normalized mean of its
 * passages) that `memex.similar` searches with.
 */
export const EmbeddingComputed = defineEvent({
  type: 'embedding.computed',
  owner: 'pipelines',
  v: 1,
  description: "Vectors of an item's parts (and the item itself) in one embedding space.",
  data: Type.Object(
    {
      item_id: Type.String({ pattern: ULID_PATTERN }),
      revision: Type.Integer({ minimum: 1 }),
      /** The parts these vectors belong to (`part.extracted`'s pipeline). */
      pipeline: Pipeline,
      space: Space,
      dims: Type.Integer({ minimum: 1 }),
      /** Parts embedded in all (parts the model could not represent are left out). */
      total: Type.Integer({ minimum: 0 }),
      ...Piece,
      item: Type.Optional(Type.String({ contentEncoding: 'base64' })),
      vectors: Type.Array(
        Type.Object(
          { ordinal: Type.Integer({ minimum: 0 }), vector: Type.String({ contentEncoding: 'base64' }) },
          { additionalProperties: false },
        ),
      ),
    },
    { additionalProperties: false },
  ),
});

export const ModelKind = Type.Union(['glove-sif', 'model2vec', 'onnx', 'http'].map((k) => Type.Literal(k)));

/**
 * An embedding model was registered (`memex models add`). Every item is embedded into its
 * space in the background; search switches to it once every item has a vector there.
 * Subject model:<space>.
 */
export const ModelAdded = defineEvent({
  type: 'model.added',
  owner: 'pipelines',
  v: 1,
  description: 'An embedding model was registered; its space is filled in the background, then becomes the active one.',
  data: Type.Object(
    {
      space: Space,
      kind: ModelKind,
      dims: Type.Integer({ minimum: 1 }),
      /** A folder path (readable wherever workers run), an http(s) URL, or `builtin:glove`. */
      spec: Type.String({ minLength: 1 }),
      name: Type.Optional(Type.String()),
      /** For HTTP endpoints: the model name and protocol. Secrets are never logged. */
      model: Type.Optional(Type.String()),
      protocol: Type.Optional(Type.Union([Type.Literal('openai'), Type.Literal('ollama')])),
      /** Human-readable facts from the provider (`describe().details`). */
      details: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()])),
    },
    { additionalProperties: false },
  ),
});

/** The owner chose the space search answers from (`memex models use`); it takes over once complete. */
export const ModelActivated = defineEvent({
  type: 'model.activated',
  owner: 'pipelines',
  v: 1,
  description: 'The owner chose the space search answers from; search switches once every item has a vector there.',
  data: Type.Object({ space: Space }, { additionalProperties: false }),
});

/** Events owned by the pipelines area. Add each definition here and to this list. */
export const pipelinesEvents: EventDefinition[] = [PartExtracted, EmbeddingComputed, ModelAdded, ModelActivated];

/** A vector as the events carry it: base64 of little-endian float32. */
export function encodeVector(vector: Float32Array): string {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i]!, i * 4);
  return bytes.toString('base64');
}

/** The inverse of `encodeVector`; checks the length against the space's dimensions. */
export function decodeVector(base64: string, dims: number): Float32Array {
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length !== dims * 4) throw new Error(`a ${dims}-d vector has ${dims * 4} bytes, this one ${bytes.length}`);
  const vector = new Float32Array(dims);
  for (let i = 0; i < dims; i++) vector[i] = bytes.readFloatLE(i * 4);
  return vector;
}
