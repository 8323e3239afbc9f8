import { Type } from '@sinclair/typebox';
import { defineMethod, Seq, type MethodDefinition } from './method.js';
import { SignalKind, TriageAction } from '../events/insights.js';

const Timestamp = Type.String({ format: 'date-time' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
const Limit = (max: number) => Type.Optional(Type.Integer({ minimum: 1, maximum: max }));

export const SignalStatus = Type.Union(
  (['new', 'snoozed', 'dismissed', 'minted'] as const).map((s) => Type.Literal(s)),
  { description: 'new (waiting for you), snoozed (until a date), dismissed, minted (an inference was made from it)' },
);

/** A signal id as callers pass it: its small number, or its key. */
const SignalRef = Type.String({ minLength: 1, maxLength: 200, description: 'the signal’s number or its key' });

export const SignalNote = Type.Object({
  id: Type.String(),
  title: Type.String(),
  created_at: Timestamp,
});

export const SignalView = Type.Object({
  /** Small number for the CLI, in order of first detection. */
  id: Type.Integer(),
  key: Type.String(),
  kind: SignalKind,
  /** The status now: a snooze whose date has passed reads `new`. */
  status: SignalStatus,
  snoozed_until: NullableTimestamp,
  /** One line saying what was found. */
  text: Type.String(),
  score: Type.Number(),
  notes: Type.Array(SignalNote),
  detail: Type.Record(Type.String(), Type.Unknown()),
  /** Whether the latest detection still finds it (judged signals are kept when their pattern fades). */
  present: Type.Boolean(),
  first_detected_at: Timestamp,
  status_changed_at: NullableTimestamp,
  inference_id: Type.Union([Type.Integer(), Type.Null()]),
  /** Key of the judged signal a grown hidden arc took its status from. */
  inherited_from: Type.Union([Type.String(), Type.Null()]),
});

export const SignalCounts = Type.Object({
  new: Type.Integer(),
  snoozed: Type.Integer(),
  dismissed: Type.Integer(),
  minted: Type.Integer(),
});

export const Detection = Type.Object({
  /** Whether this call ran detection (the notes changed since the last run) or reused the last run. */
  ran: Type.Boolean(),
  /** Detection over a large corpus is still running: these are the last run's signals; read again shortly. */
  running: Type.Boolean(),
  fingerprint: Type.Union([Type.String(), Type.Null()]),
  detected_at: NullableTimestamp,
  /** Notes (memex notes and Markdown documents) detection looked at. */
  notes: Type.Integer(),
  /** Notes without a vector in `space` yet: left out of hidden_arc (and of kNN relatedness). */
  unembedded_notes: Type.Integer(),
  /** The embedding space used: the one covering the most notes (the chosen model wins ties). */
  space: Type.Union([Type.String(), Type.Null()]),
});

export const SignalsList = defineMethod({
  name: 'memex.signals.list',
  service: 'insights',
  kind: 'query',
  access: 'any',
  summary:
    'Signals over the notes (hidden_arc, stale_state, dangling_link, tag_burst) with their triage status, within the caller’s scope (a signal shows only when all its notes do). Detection runs first when a note changed since the last run, and is skipped otherwise.',
  params: Type.Object({
    /** Default `pending`: detected now and not judged (or back from a snooze). */
    status: Type.Optional(
      Type.Union([Type.Literal('pending'), Type.Literal('all'), SignalStatus], {
        description: 'pending (default), all, or one status',
      }),
    ),
    kinds: Type.Optional(Type.Array(SignalKind, { maxItems: 4 })),
    limit: Limit(1000),
  }),
  result: Type.Object({
    signals: Type.Array(SignalView),
    /** Present signals by kind and status, within scope. */
    counts: Type.Record(Type.String(), SignalCounts),
    detection: Detection,
  }),
});

export const SignalsTriage = defineMethod({
  name: 'memex.signals.triage',
  service: 'insights',
  kind: 'command',
  access: 'any',
  summary:
    'Judge a signal: dismiss it (it never comes back), snooze it until a date, or reopen it. Re-running detection keeps the judgement.',
  params: Type.Object({
    signal: SignalRef,
    action: TriageAction,
    until: Type.Optional(Type.String({ description: 'for snooze: ISO date or date-time' })),
  }),
  result: Type.Object({ id: Type.Integer(), key: Type.String(), status: SignalStatus, seq: Seq }),
});

export const SourceMark = Type.Union([Type.Literal(' '), Type.Literal('~'), Type.Literal('✗')], {
  description: "' ' unchanged, '~' changed since mint, '✗' deleted (the evidence row is kept)",
});

export const InferenceView = Type.Object({
  id: Type.Integer(),
  title: Type.String(),
  summary: Type.String(),
  confidence: Type.Number(),
  model_id: Type.String(),
  /** Re-hashed on this read: active, stale (a source changed) or orphaned (a source was deleted). */
  status: Type.Union([Type.Literal('active'), Type.Literal('stale'), Type.Literal('orphaned')]),
  sources: Type.Array(
    Type.Object({
      note_id: Type.String(),
      /** The note's title now, or at mint time when it was deleted. */
      title: Type.String(),
      mark: SourceMark,
      snapshot_hash: Type.String(),
      current_hash: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
  signal_key: Type.Union([Type.String(), Type.Null()]),
  made_by: Type.String(),
  minted_at: Timestamp,
  revision: Type.Integer(),
  /** How to cite it: `[Inference #42, conf 0.78, from notes #…]`, with marks and `[!] STALE` when flagged. */
  citation: Type.String(),
  /** The plain-text card. */
  card: Type.String(),
});

const SynthesisParams = {
  title: Type.String({ minLength: 1, maxLength: 500, description: 'the claim' }),
  summary: Type.String({
    minLength: 1,
    maxLength: 20_000,
    description: 'why the evidence supports it',
  }),
  confidence: Type.Number({ minimum: 0, maximum: 1 }),
  model_id: Type.String({ minLength: 1, maxLength: 300, description: 'the model that synthesized it' }),
};

const Sources = Type.Array(Type.String({ minLength: 1 }), {
  minItems: 1,
  maxItems: 200,
  description: 'note ids, in citation order; their content hashes are taken now',
});

export const InferencesMint = defineMethod({
  name: 'memex.inferences.mint',
  service: 'insights',
  kind: 'command',
  access: 'any',
  summary:
    'Store a hypothesis synthesized from notes, with the content hash of each source now; from a signal (sources default to its notes, and the signal becomes minted) or directly. Inferences are never searched, briefed or synthesized from.',
  params: Type.Object({
    ...SynthesisParams,
    signal: Type.Optional(SignalRef),
    sources: Type.Optional(Sources),
  }),
  result: Type.Object({ id: Type.Integer(), citation: Type.String(), seq: Seq }),
});

export const InferencesRemint = defineMethod({
  name: 'memex.inferences.remint',
  service: 'insights',
  kind: 'command',
  access: 'any',
  summary:
    'Synthesize a flagged inference again under the same id: what is given replaces the old claim (the rest is kept) and every source is hashed afresh, so it reads active again.',
  params: Type.Object({
    id: Type.Integer({ minimum: 1 }),
    title: Type.Optional(SynthesisParams.title),
    summary: Type.Optional(SynthesisParams.summary),
    confidence: Type.Optional(SynthesisParams.confidence),
    model_id: Type.Optional(SynthesisParams.model_id),
    sources: Type.Optional(Sources),
  }),
  result: Type.Object({ id: Type.Integer(), revision: Type.Integer(), citation: Type.String(), seq: Seq }),
});

export const InferencesList = defineMethod({
  name: 'memex.inferences.list',
  service: 'insights',
  kind: 'query',
  access: 'any',
  summary:
    'Inferences, newest first, each re-hashed against its sources on this read (active, stale, orphaned); only those whose every source is in the caller’s scope.',
  params: Type.Object({
    status: Type.Optional(
      Type.Union([Type.Literal('active'), Type.Literal('stale'), Type.Literal('orphaned'), Type.Literal('flagged')], {
        description: 'flagged = stale or orphaned',
      }),
    ),
    limit: Limit(1000),
  }),
  result: Type.Object({ inferences: Type.Array(InferenceView) }),
});

export const InferencesGet = defineMethod({
  name: 'memex.inferences.get',
  service: 'insights',
  kind: 'query',
  access: 'any',
  summary: 'One inference with its sources re-hashed now: `~` beside a changed source, `✗` beside a deleted one.',
  params: Type.Object({ id: Type.Integer({ minimum: 1 }) }),
  result: InferenceView,
});

/** API methods of the insights area. Add each definition here and to this list. */
export const insightsMethods: MethodDefinition[] = [
  SignalsList,
  SignalsTriage,
  InferencesMint,
  InferencesRemint,
  InferencesList,
  InferencesGet,
];
