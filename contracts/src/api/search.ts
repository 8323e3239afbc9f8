import { Type, type Static } from '@sinclair/typebox';
import { defineMethod, Seq, type MethodDefinition } from './method.js';
import { ModelKind, Space } from '../events/pipelines.js';
import { Budget, ChatCapability, Usage } from '../events/understanding.js';

export const SearchMode = Type.Union([Type.Literal('hybrid'), Type.Literal('keyword'), Type.Literal('meaning')]);
export type SearchMode = Static<typeof SearchMode>;

/** Which signals found a hit, with its rank (from 1) in each. */
export const Why = Type.Object({
  keyword: Type.Optional(
    Type.Object({
      rank: Type.Integer({ minimum: 1 }),
      score: Type.Number(),
      /** Where the words matched: the title, the text, the senders' and recipients' names and addresses. */
      fields: Type.Array(Type.Union([Type.Literal('title'), Type.Literal('text'), Type.Literal('people')])),
    }),
  ),
  meaning: Type.Optional(
    Type.Object({
      rank: Type.Integer({ minimum: 1 }),
      /** Cosine similarity of the best passage (or the item, for `similar`) to the query. */
      similarity: Type.Number(),
    }),
  ),
});

export const SearchHit = Type.Object({
  id: Type.String(),
  kind: Type.String(),
  title: Type.String(),
  /** The best passage, matched terms between `**`; untrusted text (mail, web) quoted as data. */
  snippet: Type.String(),
  occurred_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  score: Type.Number(),
  why: Why,
});
export type SearchHit = Static<typeof SearchHit>;

const Time = Type.String({ description: 'ISO 8601 date or date-time' });

export const Search = defineMethod({
  name: 'memex.search',
  service: 'search',
  kind: 'query',
  access: 'any',
  summary:
    'Hybrid search (keyword and meaning, fused by rank) with filters, within the caller’s scope. Query syntax: "quoted phrase", from:, to:, kind:, before:, after:, -exclusion, prefix*.',
  params: Type.Object({
    q: Type.String({ maxLength: 2000 }),
    mode: Type.Optional(SearchMode),
    kinds: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 20 })),
    /** Names or addresses; an item matches when one of them sent or received it. */
    people: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 20 })),
    /** Source kinds (`mbox`, `memex`) or `kind:id`. */
    sources: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 20 })),
    /** Items carrying any of these labels. */
    labels: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 20 })),
    /** Happened at or after (inclusive)... */
    from: Type.Optional(Time),
    /** ...and before (exclusive): from 2020 to 2021 is the year 2020. */
    to: Type.Optional(Time),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    /** Hits to skip: the next page starts at the answer's `next_offset` (the first 1,000 hits page). */
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 900 })),
  }),
  result: Type.Object({
    hits: Type.Array(SearchHit),
    /** Where the next page starts, or null when these are the last hits. */
    next_offset: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
    /** The best hits of each kind among all candidates (up to 5 each), so a kind crowded out of `hits` still shows. */
    groups: Type.Record(Type.String(), Type.Array(SearchHit)),
    /** How the query was read: its words, phrases, exclusions, filters, and the corrections made. */
    query: Type.Object({
      words: Type.Array(Type.String()),
      phrases: Type.Array(Type.String()),
      excluded: Type.Array(Type.String()),
      filters: Type.Record(Type.String(), Type.Array(Type.String())),
      /** Words not in the index replaced by near spellings, prefixes or substrings of indexed words. */
      expansions: Type.Array(
        Type.Object({ word: Type.String(), matches: Type.Array(Type.String()), how: Type.String() }),
      ),
    }),
    mode: SearchMode,
    /**
     * Items found in all: every keyword match (counted among the first 3,000 matching passages)
     * and every meaning hit above the floor (at least 40% of the best hit's similarity, among the
     * nearest passages). `total_exact` is false when a limit cut the count short.
     */
    total: Type.Integer({ minimum: 0 }),
    total_exact: Type.Boolean(),
    /** The embedding space the meaning signal used (null when it was not used). */
    space: Type.Union([Type.String(), Type.Null()]),
  }),
});

export const Similar = defineMethod({
  name: 'memex.similar',
  service: 'search',
  kind: 'query',
  access: 'any',
  summary: 'More like this item: the items nearest to its item-level vector, within the caller’s scope.',
  params: Type.Object({
    id: Type.String({ minLength: 1 }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  }),
  result: Type.Object({ hits: Type.Array(SearchHit), space: Type.String() }),
});

export const ModelsAdd = defineMethod({
  name: 'memex.models.add',
  service: 'pipelines',
  kind: 'command',
  access: 'owner',
  summary:
    'Register an embedding model: a Model2Vec or ONNX folder (a path every worker can read) or an OpenAI-compatible/Ollama URL. Its space fills in the background; search switches to it when complete.',
  params: Type.Object({
    path: Type.String({ minLength: 1, description: 'model folder, http(s) URL, or builtin:glove' }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9._-]+$' })),
    model: Type.Optional(Type.String({ minLength: 1, description: 'model name, for URLs' })),
    protocol: Type.Optional(Type.Union([Type.Literal('openai'), Type.Literal('ollama')])),
    /** Given: a chat model for tiers 2 and 3 (an http(s) URL), not an embedding model. */
    tasks: Type.Optional(Type.Array(ChatCapability, { minItems: 1 })),
    version: Type.Optional(Type.String({ minLength: 1, description: 'a chat model’s version (default 1)' })),
    kinds: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), { description: 'item kinds routed to the chat model' }),
    ),
    budget: Type.Optional(Budget),
    cost_per_1k_tokens: Type.Optional(Type.Number({ minimum: 0 })),
  }),
  result: Type.Object({
    /** For a chat model: NAME@VERSION. */
    space: Space,
    kind: Type.Union([ModelKind, Type.Literal('chat')]),
    dims: Type.Integer(),
    seq: Seq,
  }),
});

export const ModelsUse = defineMethod({
  name: 'memex.models.use',
  service: 'pipelines',
  kind: 'command',
  access: 'owner',
  summary: 'Choose the space search answers from; it takes over once every item has a vector there.',
  params: Type.Object({ space: Space }),
  result: Type.Object({ space: Space, seq: Seq }),
});

export const ModelSummary = Type.Object({
  space: Type.String(),
  kind: Type.String(),
  dims: Type.Integer(),
  source: Type.String(),
  /** Items with a vector in this space, of all items that have text. */
  embedded_items: Type.Integer(),
  total_items: Type.Integer(),
  /** `active`: search answers from it; `filling`: chosen, waiting to be complete; `ready`: complete, not chosen. */
  state: Type.Union([
    Type.Literal('active'),
    Type.Literal('filling'),
    Type.Literal('ready'),
    Type.Literal('incomplete'),
  ]),
});

export const ModelsList = defineMethod({
  name: 'memex.models.list',
  service: 'search',
  kind: 'query',
  access: 'owner',
  summary: 'Embedding spaces: which is active, which was chosen, and how far each is filled.',
  params: Type.Object({}),
  result: Type.Object({ active: Type.String(), chosen: Type.String(), models: Type.Array(ModelSummary) }),
});

export const JobsStatus = defineMethod({
  name: 'memex.jobs.status',
  service: 'pipelines',
  kind: 'query',
  access: 'owner',
  summary: 'Pipeline backlog: jobs waiting and in progress at each priority.',
  params: Type.Object({}),
  result: Type.Object({
    queues: Type.Array(Type.Object({ priority: Type.String(), waiting: Type.Integer(), in_progress: Type.Integer() })),
    workers: Type.Integer({ description: 'workers of the answering pipelines process' }),
    /** Tier 0/1 jobs set aside after their retries (`memex.jobs.failed` lists them). */
    failed: Type.Integer({ minimum: 0 }),
    /** Tier 2 (chat models): its backlog, today's spend and each model's budget, and re-runs. */
    tier2: Type.Optional(
      Type.Object({
        waiting: Type.Integer(),
        in_progress: Type.Integer(),
        done: Type.Integer(),
        failed: Type.Integer(),
        last_failure: Type.Union([Type.String(), Type.Null()]),
        models: Type.Array(
          Type.Object({
            model: Type.String(),
            tasks: Type.Array(Type.String()),
            spent_today: Usage,
            budget: Budget,
            /** Set while a spent budget (or the endpoint's 429) holds the model's jobs back. */
            paused_until: Type.Union([Type.String(), Type.Null()]),
            paused_because: Type.Union([Type.String(), Type.Null()]),
          }),
        ),
        reruns: Type.Array(
          Type.Object({
            rerun_id: Type.String(),
            model: Type.String(),
            jobs: Type.Integer(),
            done: Type.Integer(),
            failed: Type.Integer(),
          }),
        ),
      }),
    ),
  }),
});

export const FailedJobSummary = Type.Object({
  /** Its place on MEMEX_JOBS: what `memex.jobs.retry` takes. */
  seq: Type.Integer({ minimum: 1 }),
  task: Type.String(),
  /** The item it worked on; none for a backfill. */
  item_id: Type.Union([Type.String(), Type.Null()]),
  priority: Type.String(),
  attempts: Type.Integer(),
  reason: Type.String(),
  failed_at: Type.String({ format: 'date-time' }),
  worker: Type.String(),
});

export const JobsFailed = defineMethod({
  name: 'memex.jobs.failed',
  service: 'pipelines',
  kind: 'query',
  access: 'owner',
  summary:
    'Tier 0/1 jobs set aside after failing every retry, oldest first, with the last error: their items miss passages, vectors or tier-0 facts until retried.',
  params: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })) }),
  result: Type.Object({ total: Type.Integer(), jobs: Type.Array(FailedJobSummary) }),
});

export const JobsRetry = defineMethod({
  name: 'memex.jobs.retry',
  service: 'pipelines',
  kind: 'command',
  access: 'owner',
  summary:
    'Queue failed jobs again (all, or the sequences given) at their priority; one that fails again is set aside again with its new reason.',
  params: Type.Object({
    seqs: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { description: 'only these', maxItems: 10_000 })),
  }),
  result: Type.Object({
    retried: Type.Array(Type.Integer()),
    gone: Type.Array(Type.Integer(), { description: 'not a failed job (retried already)' }),
  }),
});

/** API methods of the search area. Add each definition here and to this list. */
export const searchMethods: MethodDefinition[] = [
  Search,
  Similar,
  ModelsAdd,
  ModelsUse,
  ModelsList,
  JobsStatus,
  JobsFailed,
  JobsRetry,
];
