import { Type } from '@sinclair/typebox';
import { defineMethod, Seq, type MethodDefinition } from './method.js';
import { Commitment } from '../events/commitments.js';
import { CommitmentStatus, UnderstandingTask } from '../events/understanding.js';

export const Rerun = defineMethod({
  name: 'memex.rerun',
  service: 'pipelines',
  kind: 'command',
  access: 'owner',
  summary:
    "Re-run tier 2 with a registered model version as low-priority jobs: each result replaces only the same task's earlier output for the item. dry_run estimates jobs, tokens and cost against the budget.",
  params: Type.Object({
    tier: Type.Literal(2),
    model: Type.String({ minLength: 3, description: 'NAME@VERSION of a registered chat model' }),
    kind: Type.Optional(Type.String({ minLength: 1, description: 'only items of this kind (email, document…)' })),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'only items that happened from then on' })),
    tasks: Type.Optional(
      Type.Array(UnderstandingTask, { minItems: 1, description: 'default: every task the model serves' }),
    ),
    dry_run: Type.Optional(Type.Boolean()),
  }),
  result: Type.Object({
    rerun_id: Type.Union([Type.String(), Type.Null()]),
    jobs: Type.Integer(),
    /** Estimated from the items' text lengths and the prompts. */
    tokens: Type.Integer(),
    cost: Type.Number(),
    /** What the model's budget still allows today (null: no such limit). */
    budget: Type.Object({
      tokens_left_today: Type.Union([Type.Integer(), Type.Null()]),
      cost_left_today: Type.Union([Type.Number(), Type.Null()]),
      /** Days the re-run takes at the daily limits (1 when it fits today). */
      days: Type.Integer(),
    }),
    seq: Type.Union([Seq, Type.Null()]),
  }),
});

export const SynthesisSentence = Type.Object({ text: Type.String(), sources: Type.Array(Type.String()) });

export const Summarize = defineMethod({
  name: 'memex.summarize',
  service: 'pipelines',
  kind: 'command',
  access: 'owner',
  summary:
    "Tier 3: what the memex knows about a thing (a topic, project, person), written by a chat model from the thing's brief; every sentence cites the items it rests on. Never used as evidence.",
  params: Type.Object({
    thing: Type.String({ minLength: 3, description: 'a key: topic:…, project:…, person:…' }),
    budget_bytes: Type.Optional(
      Type.Integer({ minimum: 256, maximum: 65_536, description: 'of the brief the model reads; default 8192' }),
    ),
  }),
  result: Type.Object({
    thing: Type.String(),
    sentences: Type.Array(SynthesisSentence),
    made_by: Type.String(),
    /** Sentences the model wrote without a source it was given, left out. */
    dropped: Type.Integer(),
    seq: Seq,
  }),
});

export const CommitmentView = Type.Object({
  id: Type.String(),
  item_id: Type.String(),
  ...Commitment.properties,
  status: CommitmentStatus,
  /** Whether the owner set the status (else it is the maker's open). */
  status_by_owner: Type.Boolean(),
  made_by: Type.String(),
});

export const CommitmentsList = defineMethod({
  name: 'memex.commitments.list',
  service: 'graph',
  kind: 'query',
  access: 'any',
  summary:
    'Commitments read in mail and documents (who promised what to whom, by when), due first, within the caller’s scope.',
  params: Type.Object({
    status: Type.Optional(CommitmentStatus),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
  }),
  result: Type.Object({ commitments: Type.Array(CommitmentView) }),
});

export const CommitmentsSet = defineMethod({
  name: 'memex.commitments.set',
  service: 'graph',
  kind: 'command',
  access: 'owner',
  summary: "Set a commitment's status: open, done or dropped. It stays when the maker is re-run.",
  params: Type.Object({ id: Type.String({ minLength: 1 }), status: CommitmentStatus }),
  result: Type.Object({ id: Type.String(), status: CommitmentStatus, seq: Seq }),
});

/** API methods of tiers 2 and 3. Add each definition here and to this list. */
export const understandingMethods: MethodDefinition[] = [Rerun, Summarize, CommitmentsList, CommitmentsSet];
