import { Type } from '@sinclair/typebox';
import { defineMethod, Seq, type MethodDefinition } from './method.js';
import { ULID_PATTERN } from '../events/envelope.js';
import { GraphRef, Relation } from '../events/graph.js';

const Label = Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\s,]+$' });
const Timestamp = Type.String({ format: 'date-time' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
const Limit = (max: number) => Type.Optional(Type.Integer({ minimum: 1, maximum: max }));
const Basis = Type.Union([Type.Literal('observed'), Type.Literal('inferred')]);

/** A thing as other answers mention it. */
export const EntitySummary = Type.Object({
  id: Type.Integer(),
  key: Type.String(),
  kind: Type.String(),
  name: Type.String(),
});

/** An item as the graph knows it (enough to cite and order it; the item itself is memex.items.get). */
export const ItemSummary = Type.Object({
  id: Type.String(),
  kind: Type.String(),
  title: Type.String(),
  occurred_at: NullableTimestamp,
});

/** One end of a link: a thing or an item. */
export const LinkEnd = Type.Union([Type.Object({ entity: EntitySummary }), Type.Object({ item: ItemSummary })]);

/** A claim as a card shows it: the link, who made it, how sure, when it held, its evidence. */
export const Fact = Type.Object({
  link_id: Type.String(),
  rel: Type.String(),
  /** `out` when the thing is the link's source, `in` when it is the target. */
  direction: Type.Union([Type.Literal('out'), Type.Literal('in')]),
  other: LinkEnd,
  basis: Basis,
  made_by: Type.String(),
  confidence: Type.Number(),
  valid_from: NullableTimestamp,
  valid_to: NullableTimestamp,
  /** Evidence items the caller may see. */
  evidence: Type.Array(
    Type.Object({
      item: Type.String(),
      part: Type.Union([Type.String(), Type.Null()]),
      quote: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
  /** Inferred and confirmed (by the owner or by an observed link stating the same). */
  confirmed: Type.Boolean(),
});

export const TimelineEntry = Type.Object({
  item: ItemSummary,
  /** How the thing takes part in the item (`sent`, `received`, `about`…). */
  rels: Type.Array(Type.String()),
});

export const EntityCard = Type.Object({
  entity: Type.Object({
    id: Type.Integer(),
    key: Type.String(),
    kind: Type.String(),
    name: Type.String(),
    aliases: Type.Array(Type.String()),
    /** Every key that resolves to this thing (its own and those merged into it). */
    keys: Type.Array(Type.String()),
    attrs: Type.Record(Type.String(), Type.Unknown()),
  }),
  /** Set when the asked key or id was merged into this thing. */
  resolved_from: Type.Union([Type.String(), Type.Null()]),
  /** Merges into this thing that `memex.entity.split` can undo. */
  merged: Type.Array(Type.Object({ merge_id: Type.String(), key: Type.String(), name: Type.String() })),
  /** Links to other things, best first: the owner's, then observed, then inferred by confidence. */
  facts: Type.Array(Fact),
  /**
   * For an organization, what made it one, in words: the evidence that its domain is one (an
   * institution's suffix, a mailing list it hosts, several people writing from it), the people who
   * write from it and the other links that name it. Null for other things.
   */
  why: Type.Union([Type.String(), Type.Null()]),
  /**
   * For a person, the mail domains they write from that are no organization (no other evidence
   * yet: one person's vanity domain is theirs); empty for other things.
   */
  own_domains: Type.Array(Type.String()),
  stats: Type.Object({ items: Type.Integer(), first_at: NullableTimestamp, last_at: NullableTimestamp }),
  /** The most recent items, newest first. */
  timeline: Type.Array(TimelineEntry),
  /** The head's sessions that touched this thing (directly or through their items), with what they produced. */
  sessions: Type.Array(
    Type.Object({
      session: EntitySummary,
      /** The session's items: its digest, outputs, web pages read, notes. */
      produced: Type.Array(ItemSummary),
      /** Workflows the session ran or decided on. */
      workflows: Type.Array(EntitySummary),
    }),
  ),
  /** For a session (session:<id>): the things it touched, most first; empty for other things. */
  touched: Type.Array(EntitySummary),
});

const EntityParams = {
  key: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'an entity key, e.g. org:example.com, person:ann@example.com',
    }),
  ),
  id: Type.Optional(Type.Integer({ minimum: 0 })),
};

export const EntityGet = defineMethod({
  name: 'memex.entity.get',
  service: 'graph',
  kind: 'query',
  access: 'any',
  summary: 'A thing by key or id (an old key still resolves after a merge): its card with facts, aliases and timeline.',
  params: Type.Object({ ...EntityParams, timeline_limit: Limit(200) }),
  result: EntityCard,
});

export const Neighbor = Type.Object({
  entity: EntitySummary,
  /** Shared items plus direct links. */
  weight: Type.Number(),
  shared_items: Type.Integer(),
  /** Relations of direct links between the two, either way. */
  links: Type.Array(Type.String()),
});

export const EntityNeighbors = defineMethod({
  name: 'memex.entity.neighbors',
  service: 'graph',
  kind: 'query',
  access: 'any',
  summary: 'Things sharing items with a thing and things directly linked to it, with weights, heaviest first.',
  params: Type.Object({
    ...EntityParams,
    kinds: Type.Optional(Type.Array(Type.String(), { maxItems: 20 })),
    limit: Limit(500),
  }),
  result: Type.Object({ entity: EntitySummary, neighbors: Type.Array(Neighbor) }),
});

export const Graph = defineMethod({
  name: 'memex.graph',
  service: 'graph',
  kind: 'query',
  access: 'any',
  summary:
    "A thing's neighbourhood and the links among the neighbours, for a radial drawing (closer and larger: more in common); with from/to, only items that happened in that time and links of that time count.",
  params: Type.Object({
    ...EntityParams,
    limit: Limit(200),
    /** From this time on (inclusive). */
    from: Type.Optional(Timestamp),
    /** Up to this time (exclusive). */
    to: Type.Optional(Timestamp),
  }),
  result: Type.Object({
    center: EntitySummary,
    nodes: Type.Array(Type.Object({ entity: EntitySummary, weight: Type.Number(), shared_items: Type.Integer() })),
    edges: Type.Array(
      Type.Object({
        src: Type.Integer(),
        dst: Type.Integer(),
        /** Items both share, within the centre's items. */
        shared_items: Type.Integer(),
        rels: Type.Array(Type.String()),
      }),
    ),
  }),
});

export const Months = defineMethod({
  name: 'memex.months',
  service: 'graph',
  kind: 'query',
  access: 'any',
  summary: "Items per month, for a thing's timeline or (without key/id) for everything the caller may see.",
  params: Type.Object(EntityParams),
  result: Type.Object({
    months: Type.Array(Type.Object({ month: Type.String({ pattern: '^\\d{4}-\\d{2}$' }), items: Type.Integer() })),
  }),
});

export const Timeline = defineMethod({
  name: 'memex.timeline',
  service: 'graph',
  kind: 'query',
  access: 'any',
  summary:
    'Items newest first, for a thing or for everything, between dates, page by page (pass next_cursor back as cursor: no item is skipped or repeated, however many share a time).',
  params: Type.Object({
    ...EntityParams,
    before: Type.Optional(Timestamp),
    after: Type.Optional(Timestamp),
    /** Where the previous page ended: its `next_cursor`. */
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    limit: Limit(500),
  }),
  result: Type.Object({
    items: Type.Array(TimelineEntry),
    /** The next page's `cursor` (the last item's time and id), null on the last page. */
    next_cursor: Type.Union([Type.String(), Type.Null()]),
  }),
});

const EvidenceParam = Type.Object(
  {
    item: Type.String({ pattern: ULID_PATTERN }),
    part: Type.Optional(Type.String({ maxLength: 200 })),
    quote: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);

export const LinkAdd = defineMethod({
  name: 'memex.link.add',
  service: 'graph',
  kind: 'command',
  access: 'any',
  summary:
    "Link two things (or a thing and an item). The owner's links are observed and outrank inferences; an agent's are inferred and need evidence it can see.",
  params: Type.Object({
    src: GraphRef,
    rel: Relation,
    dst: GraphRef,
    valid_from: Type.Optional(Timestamp),
    valid_to: Type.Optional(Timestamp),
    evidence: Type.Optional(Type.Array(EvidenceParam, { maxItems: 100 })),
    /** An agent's own confidence; the owner's links are 1. */
    confidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    /** Names for keys this link introduces, e.g. {"project:memex": "Memex"}. */
    names: Type.Optional(Type.Record(Type.String(), Type.String({ minLength: 1, maxLength: 300 }))),
    /**
     * Who may see a link without evidence: agents sharing one of these labels. The owner's link
     * without evidence or labels is the owner's alone; an agent's links carry its labels.
     */
    labels: Type.Optional(Type.Array(Label, { maxItems: 50 })),
  }),
  result: Type.Object({ link_id: Type.String(), seq: Seq }),
});

export const LinkRetract = defineMethod({
  name: 'memex.link.retract',
  service: 'graph',
  kind: 'command',
  access: 'any',
  summary:
    'Take a link back. By the owner it is a correction: the claim stays rejected even when a pipeline infers it again. Agents retract only their own links.',
  params: Type.Object({
    link_id: Type.String({ minLength: 1, maxLength: 64 }),
    reason: Type.Optional(Type.String({ maxLength: 1000 })),
  }),
  result: Type.Object({ seq: Seq }),
});

export const EntityMerge = defineMethod({
  name: 'memex.entity.merge',
  service: 'graph',
  kind: 'command',
  access: 'owner',
  summary:
    'Merge a thing into another: keys, links and trail steps move, the old name stays an alias, the old key still resolves.',
  params: Type.Object({ from: GraphRef, into: GraphRef }),
  result: Type.Object({ merge_id: Type.String(), seq: Seq }),
});

export const EntitySplit = defineMethod({
  name: 'memex.entity.split',
  service: 'graph',
  kind: 'command',
  access: 'owner',
  summary: 'Undo a merge exactly, by its merge_id or by the key of the thing that was merged away.',
  params: Type.Object({
    merge_id: Type.Optional(Type.String({ pattern: ULID_PATTERN })),
    key: Type.Optional(GraphRef),
  }),
  result: Type.Object({ merge_id: Type.String(), seq: Seq }),
});

export const ReviewEntry = Type.Object({
  /** Pass back to memex.review.decide. */
  id: Type.String(),
  kind: Type.Union([Type.Literal('merge'), Type.Literal('link'), Type.Literal('name')]),
  summary: Type.String(),
  /** merge: the two things (accepting merges the second into the first); name: the thing (accepting names it `name`). */
  entities: Type.Array(EntitySummary),
  /** name: the name a contact card gives, which accepting makes the thing's. */
  name: Type.Optional(Type.String()),
  /** link: the low-confidence claim. */
  fact: Type.Union([Fact, Type.Null()]),
});

export const ReviewList = defineMethod({
  name: 'memex.review.list',
  service: 'graph',
  kind: 'query',
  access: 'owner',
  summary:
    'What needs a decision: merge suggestions for people with the same full name or phone, names where a contact card and mail disagree, and low-confidence links.',
  params: Type.Object({
    kind: Type.Optional(Type.Union([Type.Literal('merge'), Type.Literal('link'), Type.Literal('name')])),
    limit: Limit(500),
  }),
  result: Type.Object({ items: Type.Array(ReviewEntry) }),
});

export const ReviewDecide = defineMethod({
  name: 'memex.review.decide',
  service: 'graph',
  kind: 'command',
  access: 'owner',
  summary:
    "Accept (merge; confirm the link; use the card's name) or reject (never suggest again; retract the link) a review entry.",
  params: Type.Object({
    id: Type.String({ minLength: 1, maxLength: 500 }),
    decision: Type.Union([Type.Literal('accept'), Type.Literal('reject')]),
  }),
  result: Type.Object({ seq: Seq }),
});

export const TrailStep = Type.Object({
  step_id: Type.String(),
  ordinal: Type.Integer(),
  target: LinkEnd,
  comment: Type.Union([Type.String(), Type.Null()]),
});

export const TrailSummary = Type.Object({
  trail_id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  made_by: Type.String(),
  created_at: Timestamp,
  steps: Type.Integer(),
});

export const TrailsCreate = defineMethod({
  name: 'memex.trails.create',
  service: 'graph',
  kind: 'command',
  access: 'any',
  summary: 'Start a named trail (a path through items and things with commentary), attributed to the caller.',
  params: Type.Object({
    name: Type.String({ minLength: 1, maxLength: 300 }),
    description: Type.Optional(Type.String({ maxLength: 10_000 })),
    labels: Type.Optional(Type.Array(Label, { maxItems: 50 })),
  }),
  result: Type.Object({ trail_id: Type.String(), seq: Seq }),
});

export const TrailsAppend = defineMethod({
  name: 'memex.trails.append',
  service: 'graph',
  kind: 'command',
  access: 'any',
  summary: 'Add a step (an item or a thing, with an optional comment) at the end of a trail.',
  params: Type.Object({
    trail_id: Type.String({ pattern: ULID_PATTERN }),
    target: GraphRef,
    comment: Type.Optional(Type.String({ maxLength: 10_000 })),
  }),
  result: Type.Object({ step_id: Type.String(), seq: Seq }),
});

export const TrailsComment = defineMethod({
  name: 'memex.trails.comment',
  service: 'graph',
  kind: 'command',
  access: 'any',
  summary: "Comment on a trail, or set a step's comment.",
  params: Type.Object({
    trail_id: Type.String({ pattern: ULID_PATTERN }),
    step_id: Type.Optional(Type.String({ pattern: ULID_PATTERN })),
    comment: Type.String({ minLength: 1, maxLength: 10_000 }),
  }),
  result: Type.Object({ seq: Seq }),
});

export const TrailsMove = defineMethod({
  name: 'memex.trails.move',
  service: 'graph',
  kind: 'command',
  access: 'any',
  summary:
    'Move a step of a trail to a position (1 is first) among the steps the caller sees (steps it may not see are neither counted nor movable by it).',
  params: Type.Object({
    trail_id: Type.String({ pattern: ULID_PATTERN }),
    step_id: Type.String({ pattern: ULID_PATTERN }),
    to: Type.Integer({ minimum: 1, maximum: 100_000 }),
  }),
  result: Type.Object({ seq: Seq }),
});

export const TrailsList = defineMethod({
  name: 'memex.trails.list',
  service: 'graph',
  kind: 'query',
  access: 'any',
  summary: 'Trails the caller may see, newest first; with key, those passing through that thing.',
  params: Type.Object({ key: Type.Optional(GraphRef), limit: Limit(500) }),
  result: Type.Object({ trails: Type.Array(TrailSummary) }),
});

export const TrailsGet = defineMethod({
  name: 'memex.trails.get',
  service: 'graph',
  kind: 'query',
  access: 'any',
  summary: 'A trail with its steps and commentary (steps the caller may not see are left out).',
  params: Type.Object({ trail_id: Type.String({ pattern: ULID_PATTERN }) }),
  result: Type.Intersect([
    TrailSummary,
    Type.Object({
      labels: Type.Array(Type.String()),
      comments: Type.Array(Type.Object({ comment: Type.String(), made_by: Type.String(), at: Timestamp })),
      steps_list: Type.Array(TrailStep),
    }),
  ]),
});

export const BriefLine = Type.Object({
  section: Type.Union([
    Type.Literal('fact'),
    Type.Literal('commitment'),
    Type.Literal('event'),
    Type.Literal('note'),
    Type.Literal('trail'),
  ]),
  text: Type.String(),
  /** Where it comes from: `link:<id>`, `item:<id>`, `trail:<id>`. Never empty. */
  refs: Type.Array(Type.String(), { minItems: 1 }),
  inferred: Type.Boolean(),
});

export const ContextBrief = defineMethod({
  name: 'memex.context.brief',
  service: 'graph',
  kind: 'query',
  access: 'any',
  summary:
    "A brief for a session: key facts, open commitments, recent events, relevant notes and trails for its labels (and first message), each line with its source, inferred lines marked, within the caller's scope and never over budget.",
  params: Type.Object({
    labels: Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 50 }),
    text: Type.Optional(Type.String({ maxLength: 20_000 })),
    budget_bytes: Type.Optional(
      Type.Integer({ minimum: 64, maximum: 262_144, description: 'UTF-8 bytes of `text`; default 4096' }),
    ),
  }),
  result: Type.Object({
    /** The lines joined with newlines: what goes into a prompt. */
    text: Type.String(),
    bytes: Type.Integer(),
    lines: Type.Array(BriefLine),
    /** The things the labels and text resolved to. */
    things: Type.Array(EntitySummary),
    /** Lines left out to stay within the budget. */
    omitted: Type.Integer(),
  }),
});

export const MentionComplete = defineMethod({
  name: 'memex.mention.complete',
  service: 'graph',
  kind: 'query',
  access: 'any',
  summary: 'Completions for an @-mention: people, organizations, projects, topics, threads and papers, best first.',
  params: Type.Object({
    prefix: Type.String({ minLength: 1, maxLength: 200 }),
    kinds: Type.Optional(Type.Array(Type.String(), { maxItems: 20 })),
    limit: Limit(50),
  }),
  result: Type.Object({
    items: Type.Array(
      Type.Object({ key: Type.String(), kind: Type.String(), name: Type.String(), detail: Type.String() }),
    ),
  }),
});

/** API methods of the graph area. Add each definition here and to this list. */
export const graphMethods: MethodDefinition[] = [
  EntityGet,
  EntityNeighbors,
  Graph,
  Months,
  Timeline,
  LinkAdd,
  LinkRetract,
  EntityMerge,
  EntitySplit,
  ReviewList,
  ReviewDecide,
  TrailsCreate,
  TrailsAppend,
  TrailsComment,
  TrailsMove,
  TrailsList,
  TrailsGet,
  ContextBrief,
  MentionComplete,
];
