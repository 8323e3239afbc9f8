import { Type, type Static } from '@sinclair/typebox';
import { defineEvent, ULID_PATTERN, type EventDefinition } from './envelope.js';

/** What a chat model endpoint is registered for: tier 2's per-item tasks and tier 3's synthesis. */
export const ChatCapability = Type.Union(['summarize', 'extract'].map((k) => Type.Literal(k)));
export type ChatCapability = Static<typeof ChatCapability>;

/** Tier 2's tasks, each run (and re-run) on its own: a re-run of one never touches another's output. */
export const UnderstandingTask = Type.Union(
  ['summary', 'topics', 'entities', 'commitments', 'claims'].map((k) => Type.Literal(k)),
);
export type UnderstandingTask = Static<typeof UnderstandingTask>;

const ModelName = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$', maxLength: 100 });
/** No `@` or `/`: a maker's string form splits on them. */
const Version = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._:+-]*$', maxLength: 100 });

/**
 * Who made a derived output: the model and its version, and a hash of the prompt and JSON schema
 * it was asked with (so the same model asked differently is a different maker). Tier 0's rules
 * (`commitments@<version>`) are told apart by `makerString`'s `t2-` prefix.
 */
export const Maker = Type.Object(
  {
    task: Type.String({ pattern: '^[a-z][a-z0-9_-]*$', maxLength: 64 }),
    model: ModelName,
    version: Version,
    /** 16 hex digits of sha256 over the prompt and the schema. */
    hash: Type.String({ pattern: '^[0-9a-f]{16}$' }),
  },
  { additionalProperties: false },
);
export type Maker = Static<typeof Maker>;

/** What a model call cost: tokens as the endpoint counted them, cost by the model's price. */
export const Usage = Type.Object(
  { requests: Type.Integer({ minimum: 0 }), tokens: Type.Integer({ minimum: 0 }), cost: Type.Number({ minimum: 0 }) },
  { additionalProperties: false },
);
export type Usage = Static<typeof Usage>;

/** Per-model limits; a spent one pauses the tier using that model until its window turns. */
export const Budget = Type.Object(
  {
    requests_per_minute: Type.Optional(Type.Integer({ minimum: 1 })),
    tokens_per_day: Type.Optional(Type.Integer({ minimum: 1 })),
    cost_per_day: Type.Optional(Type.Number({ minimum: 0 })),
  },
  { additionalProperties: false },
);
export type Budget = Static<typeof Budget>;

/**
 * A chat model endpoint was registered for tasks (`memex models add URL --task summarize,extract`).
 * The API key is never logged: it is read from the credentials (`model:<name>`) when called.
 * Subject chat_model:<name>@<version>. The latest registration for a task (and item kind) is
 * the one new items are routed to.
 */
export const ChatModelAdded = defineEvent({
  type: 'model.chat_added',
  owner: 'pipelines',
  v: 1,
  description: 'A chat model endpoint was registered for tier 2/3 tasks, with its routing and budget.',
  data: Type.Object(
    {
      name: ModelName,
      version: Version,
      url: Type.String({ pattern: '^https?://' }),
      protocol: Type.Union([Type.Literal('openai'), Type.Literal('ollama')]),
      /** The model name the endpoint knows (`gpt-4o-mini`, `llama3.1:8b`). */
      model: Type.String({ minLength: 1, maxLength: 200 }),
      tasks: Type.Array(ChatCapability, { minItems: 1 }),
      /** Item kinds routed to it (empty: every kind). */
      kinds: Type.Array(Type.String({ minLength: 1 })),
      budget: Budget,
      /** Price per 1,000 tokens, for cost budgets and estimates (0 for a local model). */
      cost_per_1k_tokens: Type.Number({ minimum: 0 }),
    },
    { additionalProperties: false },
  ),
});

const Quote = Type.Optional(Type.String({ maxLength: 500 }));

export const MentionedEntity = Type.Object(
  {
    kind: Type.Union(['person', 'org', 'place', 'project'].map((k) => Type.Literal(k))),
    name: Type.String({ minLength: 1, maxLength: 300 }),
    /** An e-mail address, a domain: what joins it to a thing the graph has. */
    key: Type.Optional(Type.String({ maxLength: 300 })),
    quote: Quote,
  },
  { additionalProperties: false },
);

/**
 * One tier-2 task's output for one item, from a model (seed §5): a summary, topics, entities
 * mentioned or a paper's claims. A later output of the same task for the item replaces the
 * earlier one (whichever model made it). Subject item:<id>, erased with the item.
 */
export const ItemUnderstood = defineEvent({
  type: 'item.understood',
  owner: 'pipelines',
  v: 1,
  description: "A tier-2 task's output for one item (summary, topics, entities, claims), with its maker.",
  data: Type.Object(
    {
      item_id: Type.String({ pattern: ULID_PATTERN }),
      revision: Type.Integer({ minimum: 1 }),
      task: UnderstandingTask,
      made_by: Maker,
      usage: Usage,
      /** The re-run that asked for it (`memex rerun`), if one did. */
      rerun_id: Type.Optional(Type.String({ maxLength: 64 })),
      summary: Type.Optional(Type.String({ maxLength: 4000 })),
      topics: Type.Optional(
        Type.Array(Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), quote: Quote }), {
          maxItems: 50,
        }),
      ),
      entities: Type.Optional(Type.Array(MentionedEntity, { maxItems: 200 })),
      claims: Type.Optional(
        Type.Array(Type.Object({ text: Type.String({ minLength: 1, maxLength: 1000 }), quote: Quote }), {
          maxItems: 100,
        }),
      ),
    },
    { additionalProperties: false },
  ),
});

/**
 * A tier-2 task gave up on an item (the model's answer never matched the schema, the endpoint
 * kept failing): visible, and counted against the budget it spent. Subject item:<id>.
 */
export const UnderstandingFailed = defineEvent({
  type: 'understanding.failed',
  owner: 'pipelines',
  v: 1,
  description: 'A tier-2 task failed for an item after its retries (reason and the spend it cost).',
  data: Type.Object(
    {
      item_id: Type.String({ pattern: ULID_PATTERN }),
      task: UnderstandingTask,
      made_by: Maker,
      usage: Usage,
      reason: Type.String({ maxLength: 2000 }),
      rerun_id: Type.Optional(Type.String({ maxLength: 64 })),
    },
    { additionalProperties: false },
  ),
});

/** The owner started a re-run of a tier with a model version (`memex rerun`). Subject rerun:<id>. */
export const RerunStarted = defineEvent({
  type: 'rerun.started',
  owner: 'pipelines',
  v: 1,
  description: 'A re-run of tier 2 with a model version was queued (what it covers and how many jobs).',
  data: Type.Object(
    {
      rerun_id: Type.String({ minLength: 1, maxLength: 64 }),
      tier: Type.Literal(2),
      model: Type.String({ minLength: 1 }),
      tasks: Type.Array(UnderstandingTask),
      kind: Type.Optional(Type.String()),
      since: Type.Optional(Type.String({ format: 'date-time' })),
      jobs: Type.Integer({ minimum: 0 }),
    },
    { additionalProperties: false },
  ),
});

/**
 * Tier 3: a thing's "what do I know" synthesis (seed §5.1), every sentence citing the items it
 * rests on. Inferred: nothing consumes it as evidence (seed §3.3). Subject thing:<key>.
 */
export const SynthesisMade = defineEvent({
  type: 'synthesis.made',
  owner: 'pipelines',
  v: 1,
  description: "A thing's synthesis by a model, each sentence with the items it cites; never used as evidence.",
  data: Type.Object(
    {
      thing: Type.String({ minLength: 1, maxLength: 500 }),
      made_by: Maker,
      usage: Usage,
      sentences: Type.Array(
        Type.Object(
          {
            text: Type.String({ minLength: 1, maxLength: 2000 }),
            sources: Type.Array(Type.String({ pattern: ULID_PATTERN }), { minItems: 1 }),
          },
          { additionalProperties: false },
        ),
      ),
    },
    { additionalProperties: false },
  ),
});

/**
 * `t2-topics@gpt-4o-mini/2#1a2b…`: a model's maker as the `made_by` string links and
 * `commitment.extracted` carry. Before the @ is the task (a re-run replaces that task's earlier
 * outputs, whatever model or version made them); `t2-` keeps tier 0's rule-made tasks apart.
 */
export function makerString(maker: Maker): string {
  return `t2-${maker.task}@${maker.model}/${maker.version}#${maker.hash}`;
}

export const CommitmentStatus = Type.Union(['open', 'done', 'dropped'].map((k) => Type.Literal(k)));

/**
 * The owner said a commitment is open, done or dropped (`memex commitments set`). It outlives
 * re-runs of the maker: the status belongs to the commitment's id (item, who and what), not to
 * the event that found it. Subject commitment:<id>.
 */
export const CommitmentStatusSet = defineEvent({
  type: 'commitment.status_set',
  owner: 'graph',
  v: 1,
  description: "The owner set a commitment's status (open, done, dropped).",
  data: Type.Object(
    { commitment_id: Type.String({ minLength: 1, maxLength: 64 }), status: CommitmentStatus },
    { additionalProperties: false },
  ),
});

/** Events of tier 2 and 3 (pipelines). Add each definition here and to this list. */
export const understandingEvents: EventDefinition[] = [
  ChatModelAdded,
  ItemUnderstood,
  UnderstandingFailed,
  RerunStarted,
  SynthesisMade,
  CommitmentStatusSet,
];
