import { Type, type Static } from '@sinclair/typebox';
import { defineEvent, ULID_PATTERN, type EventDefinition } from './envelope.js';
import { Usage } from './understanding.js';

/** A person in a commitment: the mail address (lowercased) when known, and the name as written. */
export const CommitmentParty = Type.Object(
  {
    address: Type.String({ maxLength: 320 }),
    name: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

export const Commitment = Type.Object(
  {
    /**
     * Stable within the item and maker's task: the same promise read again (a replay, a re-run
     * with a newer version) has the same key, so the owner's open/done/dropped carries over.
     */
    key: Type.String({ minLength: 1, maxLength: 200 }),
    /** `promise`: `by` said they will do it ("I'll send the draft by Friday"); `request`: `by` were asked to. */
    kind: Type.Union([Type.Literal('promise'), Type.Literal('request')]),
    by: Type.Array(CommitmentParty),
    to: Type.Array(CommitmentParty),
    /** What is promised, as written ("send the draft"). */
    what: Type.String({ minLength: 1, maxLength: 500 }),
    /**
     * By when, resolved against the message's date: a day as YYYY-MM-DD, a time as ISO 8601;
     * null when the text gives no time.
     */
    due: Type.Union([Type.String({ maxLength: 40 }), Type.Null()]),
    /** The words that gave the time ("by Friday", "next week"), or null. */
    due_text: Type.Union([Type.String({ maxLength: 200 }), Type.Null()]),
    /** The sentence it was read from, and its span [start, end) in the item's text. */
    quote: Type.String({ maxLength: 1000 }),
    start: Type.Integer({ minimum: 0 }),
    end: Type.Integer({ minimum: 0 }),
    /** How sure the maker is (rules: fixed per pattern; a model: its own). */
    confidence: Type.Number({ minimum: 0, maximum: 1 }),
  },
  { additionalProperties: false },
);
export type Commitment = Static<typeof Commitment>;

/**
 * Commitments read in an item's text: who promised what to whom and by when. Made by tier 0's
 * rules (`made_by` = `commitments@<version>`) or by a tier-2 model (`made_by` = the model, its
 * version and the prompt's hash); the list from one maker's task replaces what the same task
 * (any version) said about the item before. Subject item:<id>; the envelope carries the item's scope.
 */
export const CommitmentExtracted = defineEvent({
  type: 'commitment.extracted',
  owner: 'pipelines',
  v: 1,
  description: "Who promised what to whom and by when, read in an item's text by rules or a model.",
  data: Type.Object(
    {
      item_id: Type.String({ pattern: ULID_PATTERN }),
      revision: Type.Integer({ minimum: 1 }),
      /** `<task>@<version>` for rules, `<task>@<model>@<version>#<prompt hash>` or similar for a model. */
      made_by: Type.String({ minLength: 3, maxLength: 300 }),
      commitments: Type.Array(Commitment),
      /** A model's spend on it (tier 2; counted against the model's budget), and the re-run that asked. */
      usage: Type.Optional(Usage),
      rerun_id: Type.Optional(Type.String({ maxLength: 64 })),
    },
    { additionalProperties: false },
  ),
});

export const commitmentEvents: EventDefinition[] = [CommitmentExtracted];
