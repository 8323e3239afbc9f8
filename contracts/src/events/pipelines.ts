import { Type, type Static } from '@sinclair/typebox';
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

/** What tier 0 finds in text without a model (seed §5). */
export const MentionKind = Type.Union(
  ['date', 'money', 'url', 'phone', 'doi', 'arxiv', 'isbn', 'address'].map((k) => Type.Literal(k)),
);

/** Character offsets [start, end) into the item's text: the evidence of what was read there. */
const TextSpan = { start: Type.Integer({ minimum: 0 }), end: Type.Integer({ minimum: 0 }) };

export const Mention = Type.Object(
  {
    kind: MentionKind,
    /** The text as written. */
    text: Type.String({ maxLength: 2000 }),
    /**
     * The value in one spelling: a date as ISO 8601 (a day alone as YYYY-MM-DD; a time carries a
     * zone only when the text gives one), money as
     * `<ISO 4217> <amount>`, a phone in E.164, a DOI lowercased, an arXiv id without `arXiv:`, an
     * ISBN as 13 digits, a URL and an address as written.
     */
    value: Type.String({ maxLength: 2000 }),
    ...TextSpan,
  },
  { additionalProperties: false },
);
export type Mention = Static<typeof Mention>;

/** A mail's signature block (seed §4.3): who the sender says they are, each field with its span. */
export const SignatureBlock = Type.Object(
  {
    /** The sender's address (the From header): whose facts these are. */
    sender: Type.String(),
    ...TextSpan,
    fields: Type.Array(
      Type.Object(
        {
          field: Type.Union(['name', 'title', 'company', 'phone'].map((k) => Type.Literal(k))),
          /** As written; a phone's value is E.164. */
          text: Type.String({ maxLength: 500 }),
          value: Type.String({ maxLength: 500 }),
          ...TextSpan,
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type SignatureBlock = Static<typeof SignatureBlock>;

/**
 * Tier 0 read an item's text with rules, no model: dates, money, URLs, phones, DOIs, arXiv ids,
 * ISBNs, postal addresses, and a mail's signature block. Subject item:<id>; the envelope carries
 * the item's scope. A later event for the item replaces an earlier one.
 */
export const StructureExtracted = defineEvent({
  type: 'structure.extracted',
  owner: 'pipelines',
  v: 1,
  description:
    "What tier 0 read in an item's text without a model (dates, amounts, identifiers, a signature), with spans.",
  data: Type.Object(
    {
      item_id: Type.String({ pattern: ULID_PATTERN }),
      revision: Type.Integer({ minimum: 1 }),
      /** The task and its rules' version, e.g. `structure@1`. */
      made_by: Pipeline,
      mentions: Type.Array(Mention),
      /** More mentions were found than one event carries (the first ones are kept). */
      truncated: Type.Boolean(),
      signature: Type.Optional(SignatureBlock),
    },
    { additionalProperties: false },
  ),
});

/** Events owned by the pipelines area. Add each definition here and to this list. */
export const pipelinesEvents: EventDefinition[] = [
  PartExtracted,
  EmbeddingComputed,
  ModelAdded,
  ModelActivated,
  StructureExtracted,
];

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
