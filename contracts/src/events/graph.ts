import { Type, type Static } from '@sinclair/typebox';
import { defineEvent, ULID_PATTERN, type EventDefinition } from './envelope.js';

/**
 * A thing or an item, as the graph names it: an entity key (`person:ann@example.com`,
 * `org:example.com`, `topic:<slug>`, `place:geonames:<id>`, `claim:<hash>`, `project:<name>`)
 * or `item:<id>`. The kinds `item` and `entity` are reserved (`entity:<id>` names a thing by id
 * in the API only; events always carry keys, so merges and splits can follow them).
 */
export const GraphRef = Type.String({ pattern: '^[a-z][a-z_]*:.+$', maxLength: 500 });

/** Link relations: an open vocabulary; the seed's core set is listed in `CORE_RELATIONS`. */
export const Relation = Type.String({ pattern: '^[a-z][a-z_]*$', maxLength: 64 });

export const CORE_RELATIONS = [
  'sent',
  'received',
  'cc',
  'bcc',
  'member_of',
  'works_at',
  'knows',
  'about',
  'mentions',
  'authored',
  'cites',
  'appears_in',
  'located_at',
  'attended',
  'decided',
  'committed_to',
  'contradicts',
  'supports',
  'part_of',
] as const;

/** What supports a claim: an item (optionally a part of it and the passage quoted) or another claim. */
export const EvidenceRef = Type.Union([
  Type.Object(
    {
      item: Type.String({ pattern: ULID_PATTERN }),
      part: Type.Optional(Type.String({ maxLength: 200 })),
      quote: Type.Optional(Type.String({ maxLength: 2000 })),
    },
    { additionalProperties: false },
  ),
  Type.Object({ link: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
]);
export type EvidenceRef = Static<typeof EvidenceRef>;

const Timestamp = Type.String({ format: 'date-time' });

const LinkBody = {
  src: GraphRef,
  rel: Relation,
  dst: GraphRef,
  valid_from: Type.Optional(Timestamp),
  valid_to: Type.Optional(Timestamp),
  confidence: Type.Number({ minimum: 0, maximum: 1 }),
  evidence: Type.Array(EvidenceRef, { maxItems: 100 }),
};

/**
 * A link made by a caller: the owner's links are observed (and confirm the claim they state);
 * an agent's are inferred and need evidence. Subject link:<link_id>.
 */
export const LinkAdded = defineEvent({
  type: 'link.added',
  owner: 'graph',
  v: 1,
  description: 'A caller asserted a link. basis observed when the owner made it, inferred when a session did.',
  data: Type.Object(
    {
      link_id: Type.String({ minLength: 1, maxLength: 64 }),
      ...LinkBody,
      basis: Type.Union([Type.Literal('observed'), Type.Literal('inferred')]),
      /** `user`, or `session:<token id>` for an agent. */
      made_by: Type.String({ minLength: 1 }),
      /** Names for keys this link introduces (`{"topic:memex": "Memex"}`). */
      names: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 300 }))),
    },
    { additionalProperties: false },
  ),
});

/** A link was taken back. When the owner retracts, it is a correction: the claim is rejected, whoever makes it again. */
export const LinkRetracted = defineEvent({
  type: 'link.retracted',
  owner: 'graph',
  v: 1,
  description:
    'A link was retracted; by the owner it is an observed correction that outranks inferences. Subject link:<id>.',
  data: Type.Object(
    { link_id: Type.String({ minLength: 1 }), reason: Type.Optional(Type.String({ maxLength: 1000 })) },
    { additionalProperties: false },
  ),
});

/** The owner confirmed an inferred link (from the review queue): it may now support other inferences. */
export const LinkConfirmed = defineEvent({
  type: 'link.confirmed',
  owner: 'graph',
  v: 1,
  description: 'The owner confirmed the claim an inferred link states. Subject link:<id>.',
  data: Type.Object({ link_id: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
});

/**
 * A pipeline's inferred links from one item. Supersedes every link the same pipeline (any
 * version) inferred from that item before; observed links and other pipelines' links stay.
 * Subject item:<item_id>, so the item's deletion erases it with the item's other events.
 */
export const LinksInferred = defineEvent({
  type: 'links.inferred',
  owner: 'pipelines',
  v: 1,
  description: "A pipeline's inferred links from one item, replacing that pipeline's earlier ones for the item.",
  data: Type.Object(
    {
      /** `<pipeline>@<version>`, e.g. `understand-v1@llama3`. */
      made_by: Type.String({ pattern: '^[a-z0-9][a-z0-9_.-]*@.+$' }),
      item_id: Type.String({ pattern: ULID_PATTERN }),
      /** An evidence list left empty means the item itself. */
      links: Type.Array(
        Type.Object({ ...LinkBody, evidence: Type.Optional(LinkBody.evidence) }, { additionalProperties: false }),
        { maxItems: 1000 },
      ),
      names: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 300 }))),
    },
    { additionalProperties: false },
  ),
});

/** The owner merged one thing into another. Subject entity:<into key>. */
export const EntityMerged = defineEvent({
  type: 'entity.merged',
  owner: 'graph',
  v: 1,
  description: "Two things are one: `from`'s keys, links and trail steps move to `into`, its name stays as an alias.",
  data: Type.Object(
    {
      merge_id: Type.String({ pattern: ULID_PATTERN }),
      /** Founding keys of the two things, as they were when the merge was decided. */
      from: GraphRef,
      into: GraphRef,
    },
    { additionalProperties: false },
  ),
});

/** A merge undone: the graph is as if it had never happened. Subject entity:<from key>. */
export const EntitySplitEvent = defineEvent({
  type: 'entity.split',
  owner: 'graph',
  v: 1,
  description: 'A merge was undone exactly.',
  data: Type.Object({ merge_id: Type.String({ pattern: ULID_PATTERN }) }, { additionalProperties: false }),
});

/** The owner turned down a review suggestion (a merge of two people with the same name). */
export const ReviewDismissed = defineEvent({
  type: 'review.dismissed',
  owner: 'graph',
  v: 1,
  description: 'A merge suggestion was rejected; it is not suggested again. Subject review:<suggestion>.',
  data: Type.Object({ suggestion: Type.String({ minLength: 1, maxLength: 500 }) }, { additionalProperties: false }),
});

/**
 * The owner chose what a thing is called (from the review queue: a contact card and mail giving
 * one address two names). It outranks every name read in items, on replay too. Subject entity:<key>.
 */
export const EntityNamed = defineEvent({
  type: 'entity.named',
  owner: 'graph',
  v: 1,
  description: "The owner chose a thing's name; it outranks the names read in items.",
  data: Type.Object(
    { key: GraphRef, name: Type.String({ minLength: 1, maxLength: 300 }) },
    { additionalProperties: false },
  ),
});

/** A named path through items and things (Bush's associative trail). Subject trail:<id>. */
export const TrailCreated = defineEvent({
  type: 'trail.created',
  owner: 'graph',
  v: 1,
  description: 'A trail was started.',
  data: Type.Object(
    {
      trail_id: Type.String({ pattern: ULID_PATTERN }),
      name: Type.String({ minLength: 1, maxLength: 300 }),
      description: Type.String({ maxLength: 10_000 }),
    },
    { additionalProperties: false },
  ),
});

export const TrailAppended = defineEvent({
  type: 'trail.appended',
  owner: 'graph',
  v: 1,
  description: 'A step was added at the end of a trail. Subject trail:<id>.',
  data: Type.Object(
    {
      trail_id: Type.String({ pattern: ULID_PATTERN }),
      step_id: Type.String({ pattern: ULID_PATTERN }),
      target: GraphRef,
      comment: Type.Optional(Type.String({ maxLength: 10_000 })),
    },
    { additionalProperties: false },
  ),
});

export const TrailCommented = defineEvent({
  type: 'trail.commented',
  owner: 'graph',
  v: 1,
  description: "Commentary on a trail, or on one of its steps (replacing that step's comment). Subject trail:<id>.",
  data: Type.Object(
    {
      trail_id: Type.String({ pattern: ULID_PATTERN }),
      step_id: Type.Optional(Type.String({ pattern: ULID_PATTERN })),
      comment: Type.String({ maxLength: 10_000 }),
    },
    { additionalProperties: false },
  ),
});

/**
 * A step moved within its trail: placed right after another step, or first. The place is named by
 * a step, not a number, so it means the same to every scope and on every replay (the caller's
 * position among the steps it sees is turned into this by the command).
 */
export const TrailReordered = defineEvent({
  type: 'trail.reordered',
  owner: 'graph',
  v: 1,
  description: 'A step was moved: right after `after_step_id`, or first when that is null. Subject trail:<id>.',
  data: Type.Object(
    {
      trail_id: Type.String({ pattern: ULID_PATTERN }),
      step_id: Type.String({ pattern: ULID_PATTERN }),
      after_step_id: Type.Union([Type.String({ pattern: ULID_PATTERN }), Type.Null()]),
    },
    { additionalProperties: false },
  ),
});

/** Events owned by the graph area. Add each definition here and to this list. */
export const graphEvents: EventDefinition[] = [
  LinkAdded,
  LinkRetracted,
  LinkConfirmed,
  LinksInferred,
  EntityMerged,
  EntitySplitEvent,
  EntityNamed,
  ReviewDismissed,
  TrailCreated,
  TrailAppended,
  TrailCommented,
  TrailReordered,
];
