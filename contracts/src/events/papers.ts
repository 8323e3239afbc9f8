import { Type, type Static } from '@sinclair/typebox';
import { defineEvent, ULID_PATTERN, type EventDefinition } from './envelope.js';

/** Character offsets [start, end) into the item's text: where a field was read. */
const TextSpan = { start: Type.Integer({ minimum: 0 }), end: Type.Integer({ minimum: 0 }) };

/** A DOI lowercased (`10.1145/3366423.3380211`), an arXiv id without `arXiv:` or version (`2103.15348`). */
const Doi = Type.Union([Type.String({ pattern: '^10\\.[0-9]{4,9}/\\S+$', maxLength: 300 }), Type.Null()]);
const Arxiv = Type.Union([Type.String({ minLength: 1, maxLength: 60 }), Type.Null()]);
const Year = Type.Union([Type.Integer({ minimum: 1000, maximum: 2999 }), Type.Null()]);

/** One entry of a paper's reference list, as parsed from its text (no model). */
export const PaperReference = Type.Object(
  {
    /** 0-based position in the list. */
    ordinal: Type.Integer({ minimum: 0 }),
    /** How the text cites it: `12` for `[12]`, `Aligon et al., 2010a` for author-year lists. */
    label: Type.Union([Type.String({ maxLength: 200 }), Type.Null()]),
    /** The reference as written (lines joined, hyphenation kept). */
    text: Type.String({ maxLength: 2000 }),
    /** The PDF page (from 1) the reference starts on. */
    page: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
    ...TextSpan,
    /** What could be read out of it; null or empty where the rules could not tell. */
    title: Type.Union([Type.String({ maxLength: 1000 }), Type.Null()]),
    authors: Type.Array(Type.String({ maxLength: 200 })),
    year: Year,
    doi: Doi,
    arxiv: Arxiv,
  },
  { additionalProperties: false },
);
export type PaperReference = Static<typeof PaperReference>;

/** What a paper says it is: the fields of seed §4.5's paper handler. */
export const PaperHeader = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 1000 }),
    /** Names as printed (affiliation marks and footnote digits removed). */
    authors: Type.Array(Type.String({ maxLength: 200 })),
    venue: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]),
    year: Year,
    abstract: Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()]),
    doi: Doi,
    arxiv: Arxiv,
  },
  { additionalProperties: false },
);
export type PaperHeader = Static<typeof PaperHeader>;

/**
 * Tier 0 read a PDF as a research paper (it names a DOI or an arXiv id, or has a references
 * section): its header and its reference list, each reference with its span and page. Subject
 * item:<id>; the envelope carries the item's scope. A PDF that is not a paper gets one with
 * `paper: null`, so a new revision that stopped being one takes back what the last one said.
 * A later event for the item replaces an earlier one.
 */
export const PaperExtracted = defineEvent({
  type: 'paper.extracted',
  owner: 'pipelines',
  v: 1,
  description:
    'A PDF read as a research paper (title, authors, venue, year, abstract, DOI/arXiv id) and its references.',
  data: Type.Object(
    {
      item_id: Type.String({ pattern: ULID_PATTERN }),
      revision: Type.Integer({ minimum: 1 }),
      /** The rules and their version, e.g. `papers@1`. */
      made_by: Type.String({ pattern: '^[a-z][a-z0-9_-]*@[0-9A-Za-z.+_-]+$' }),
      paper: Type.Union([PaperHeader, Type.Null()]),
      references: Type.Array(PaperReference),
      /** More references than one event carries (the first ones are kept). */
      truncated: Type.Boolean(),
    },
    { additionalProperties: false },
  ),
});

/** Events owned by the pipelines area about papers. */
export const paperEvents: EventDefinition[] = [PaperExtracted];
