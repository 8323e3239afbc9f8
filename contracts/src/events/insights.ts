import { Type, type Static } from '@sinclair/typebox';
import { defineEvent, ULID_PATTERN, type EventDefinition } from './envelope.js';

const Timestamp = Type.String({ format: 'date-time' });

export const SignalKind = Type.Union(
  (['hidden_arc', 'stale_state', 'dangling_link', 'tag_burst'] as const).map((k) => Type.Literal(k)),
);
export type SignalKind = Static<typeof SignalKind>;

/**
 * A pattern the deterministic detectors found (seed 001): `key` is its fingerprint (re-detection
 * of the same pattern maps onto the same key), `note_ids` its evidence, `detail` kind-specific
 * (the insights engine's `*Detail` types: sizes, dates, ids), where the notes' own words (a tag,
 * a dangling link's target) are only their sha256 (`tag_sha256`, `target_sha256`), so a deleted
 * note's words do not stay on the log.
 */
export const DetectedSignal = Type.Object(
  {
    key: Type.String({ pattern: '^[a-z_]+:[0-9a-f]+$' }),
    kind: SignalKind,
    note_ids: Type.Array(Type.String({ minLength: 1 })),
    score: Type.Number({ minimum: 0, maximum: 1 }),
    detail: Type.Record(Type.String(), Type.Unknown()),
  },
  { additionalProperties: false },
);
export type DetectedSignal = Static<typeof DetectedSignal>;

/**
 * The insights service ran detection because the notes (or its configuration) changed since the
 * last run: the whole result, so the read model merges it into the triaged signals (judged ones
 * stay judged). Large results come in pieces under the log's message limit; the read model
 * merges a run once it has every piece. `signals` is absent when the corpus fingerprint matched
 * the last run's (nothing to merge: the run only records that these notes were seen).
 * Subject detection:<run>.
 */
export const SignalsDetected = defineEvent({
  type: 'signals.detected',
  owner: 'insights',
  v: 1,
  description:
    'Signal detection ran over the notes; the read model merges the result into the triaged signals (judged ones never resurface).',
  data: Type.Object(
    {
      run: Type.String({ pattern: ULID_PATTERN }),
      /** The engine's corpus fingerprint of the notes and configuration detected over. */
      fingerprint: Type.String({ minLength: 1 }),
      /** The last note-changing event the run's notes reflect (the dirty flag). */
      notes_seq: Type.Integer({ minimum: 0 }),
      /** sha256 of the engine configuration used. */
      config_hash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
      piece: Type.Integer({ minimum: 0 }),
      pieces: Type.Integer({ minimum: 1 }),
      signals: Type.Optional(Type.Array(DetectedSignal)),
    },
    { additionalProperties: false },
  ),
});

export const TriageAction = Type.Union(
  (['dismiss', 'snooze', 'reopen'] as const).map((a) => Type.Literal(a)),
  {
    description:
      'dismiss (never shown again), snooze (until a date), reopen (undo either). Minting is recorded by inference.minted.',
  },
);

/** The owner or an agent judged a signal. Subject signal:<key>. */
export const SignalTriaged = defineEvent({
  type: 'signal.triaged',
  owner: 'insights',
  v: 1,
  description: 'A signal was dismissed, snoozed until a date, or reopened.',
  data: Type.Object(
    {
      key: Type.String({ minLength: 1 }),
      action: TriageAction,
      /** For snooze: when it comes back. */
      until: Type.Optional(Timestamp),
    },
    { additionalProperties: false },
  ),
});

export const InferenceSourceSnapshot = Type.Object(
  {
    note_id: Type.String({ minLength: 1 }),
    /** The note's content hash when the inference was minted: every read compares it with the note now. */
    content_hash: Type.String({ minLength: 1 }),
  },
  { additionalProperties: false },
);

const Synthesis = {
  id: Type.Integer({ minimum: 1, description: 'small integers in minting order' }),
  title: Type.String({ minLength: 1 }),
  summary: Type.String({ minLength: 1 }),
  confidence: Type.Number({ minimum: 0, maximum: 1 }),
  model_id: Type.String({ minLength: 1 }),
  sources: Type.Array(InferenceSourceSnapshot, { minItems: 1 }),
};

/**
 * An agent-synthesized hypothesis with provenance (seed 001 "Inferences"). It is stored apart from
 * notes: no projector but the insights one reads it, so search, briefs and later syntheses never
 * see it. When `signal_key` is set, the signal becomes `minted` (in the same event, so the two
 * never disagree). Subject inference:<id>, published with expected-last-subject-sequence 0: the
 * log decides which mint an id belongs to. Who minted it is the actor.
 */
export const InferenceMinted = defineEvent({
  type: 'inference.minted',
  owner: 'insights',
  v: 1,
  description: 'An inference (a hypothesis with the content hash of every source note) was minted.',
  data: Type.Object(
    { ...Synthesis, signal_key: Type.Union([Type.String({ minLength: 1 }), Type.Null()]) },
    { additionalProperties: false },
  ),
});

/** A stale or orphaned inference was synthesized again: the whole claim and fresh source hashes, same id. */
export const InferenceReminted = defineEvent({
  type: 'inference.reminted',
  owner: 'insights',
  v: 1,
  description: 'An inference was re-minted: new claim and fresh source hashes under the same id.',
  data: Type.Object(Synthesis, { additionalProperties: false }),
});

/** Events owned by the insights area. Add each definition here and to this list. */
export const insightsEvents: EventDefinition[] = [SignalsDetected, SignalTriaged, InferenceMinted, InferenceReminted];
