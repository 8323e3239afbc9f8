import type { ColumnType, Generated, JSONColumnType } from 'kysely';

/** bigint ids come back from pg as strings; they go in as numbers. */
type BigintId = ColumnType<string, number | string, number | string>;
type Timestamp = ColumnType<Date, Date | string, Date | string>;

/** A link's ends (a thing by key and id, or an item) and relation: a link and a verdict on one. */
interface LinkEnds {
  src_key: string | null;
  src_entity: BigintId | null;
  src_item: string | null;
  rel: string;
  dst_key: string | null;
  dst_entity: BigintId | null;
  dst_item: string | null;
}

/**
 * The graph read model (schema `graph`), as migrations.ts creates it. Most statements are raw
 * SQL (recursive walks, multi-row upserts); this names the tables and columns they use.
 */
export interface GraphDatabase {
  /** Items as the graph needs them: to cite, order and scope-check what links rest on. */
  thread_joins: { merged: string; key: string };
  items: {
    id: string;
    kind: string;
    title: string;
    excerpt: Generated<string>;
    labels: string[];
    spam: Generated<boolean>;
    occurred_at: Timestamp | null;
    made_by: string;
    thread_key: string | null;
    participants: JSONColumnType<unknown[]> | null;
  };
  tombstones: { id: string };
  /** GeoNames places as the media pipeline names them: a place thing's attrs. */
  places: {
    key: string;
    geonames_id: number;
    country: string;
    admin1: string;
    latitude: number;
    longitude: number;
  };
  /** Papers tier 0 read (projection/papers.ts): what references resolve against, and paper things' attrs. */
  papers: {
    item: string;
    key: string;
    title: string;
    norm_title: string;
    year: number | null;
    doi: string | null;
    arxiv: string | null;
    venue: string | null;
  };
  /** Stub papers named by a reference's title (projection/papers.ts), for a paper read later to take over. */
  paper_stubs: { key: string; norm_title: string; year: number | null };
  /** Items per month per visibility class, so memex.months never scans items. */
  month_counts: { month: ColumnType<Date, string, string>; kind: string; labels: string[]; spam: boolean; n: number };
  entities: {
    id: BigintId;
    kind: string;
    key: string;
    name: string;
    aliases: Generated<string[]>;
    attrs: Generated<JSONColumnType<Record<string, unknown>>>;
    merged_into: BigintId | null;
    weight: Generated<number>;
  };
  entity_keys: { key: string; entity: BigintId };
  /** Names seen for a key, per visibility class of where they were seen. */
  key_names: { key: string; name: string; kind: string; labels: string[]; spam: boolean; n: number };
  /** Observations of a key per visibility class: a thing is visible where one of its keys was observed. */
  key_scope: { key: string; kind: string; labels: string[]; spam: boolean; n: number };
  mention_terms: { term: string; entity: BigintId };
  mention_prefixes: { prefix: string; exact: boolean; tier: number; entity: BigintId };
  links: LinkEnds & {
    id: string;
    valid_from: Timestamp | null;
    valid_to: Timestamp | null;
    confidence: number;
    basis: 'observed' | 'inferred';
    made_by: string;
    pipeline: string;
    vis_kind: string | null;
    labels: Generated<string[]>;
    spam: Generated<boolean>;
    status: Generated<'active' | 'retracted'>;
  };
  /** `via`: the item whose reading produced this evidence, '' for a caller's. */
  evidence: { link: string; item: string; part: Generated<string>; quote: string | null; via: Generated<string> };
  /** The owner's word on a claim, whoever states it. */
  verdicts: LinkEnds & {
    claim: string;
    verdict: 'confirmed' | 'rejected';
    decided_at: Timestamp;
  };
  refused_evidence: { link: string; made_by: string; item: string; evidence: string; reason: string };
  merges: { merge_id: string; from_entity: BigintId; into_entity: BigintId; keys: string[]; at: Timestamp };
  review_dismissed: { suggestion: string };
  trails: {
    id: string;
    name: string;
    description: string;
    labels: string[];
    kind: Generated<string>;
    spam: Generated<boolean>;
    made_by: string;
    created_at: Timestamp;
  };
  trail_steps: {
    step_id: string;
    trail_id: string;
    ordinal: number;
    target_key: string | null;
    target_entity: BigintId | null;
    target_item: string | null;
    comment: string | null;
  };
  trail_comments: { id: string; trail_id: string; comment: string; made_by: string; at: Timestamp };
}
