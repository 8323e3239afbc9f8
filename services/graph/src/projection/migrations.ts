import { sql } from 'kysely';
import type { Migration } from '@memex/db';
import { tierSql, writePrefixes } from './entities.js';

/**
 * The graph read model (seed §4.3). Everything a thing shows (its name, aliases, attrs, weight,
 * search terms) is a function of the keys it owns, so a merge moves keys and a split moves them
 * back, and every table is as it was.
 */
export const graphMigrations: Migration[] = [
  {
    name: '001_graph',
    async up(db) {
      // Items as the graph needs them: to cite, order and scope-check what links rest on.
      await sql`create table items (
        id text primary key,
        kind text not null,
        title text not null,
        excerpt text not null default '',
        labels text[] not null,
        spam boolean not null default false,
        occurred_at timestamptz,
        made_by text not null,
        thread_key text,
        participants jsonb
      )`.execute(db);
      await sql`create index items_time on items (occurred_at desc)`.execute(db);
      await sql`create index items_thread on items (thread_key) where thread_key is not null`.execute(db);
      await sql`create index items_title_trgm on items using gin (lower(title) gin_trgm_ops) where kind in ('paper', 'document')`.execute(
        db,
      );
      await sql`create index items_notes_fts on items using gin (to_tsvector('english', title || ' ' || excerpt)) where kind = 'note'`.execute(
        db,
      );
      await sql`create table tombstones (id text primary key)`.execute(db);
      // Items per month per visibility class, so memex.months never scans items.
      await sql`create table month_counts (
        month date not null, kind text not null, labels text[] not null, spam boolean not null, n integer not null,
        primary key (month, kind, labels, spam)
      )`.execute(db);

      await sql`create table entities (
        id bigint primary key,
        kind text not null,
        key text not null unique,
        name text not null,
        aliases text[] not null default '{}',
        attrs jsonb not null default '{}',
        merged_into bigint,
        weight integer not null default 0
      )`.execute(db);
      await sql`create index entities_merged on entities (merged_into) where merged_into is not null`.execute(db);
      await sql`create index entities_name on entities (kind, lower(name)) where merged_into is null`.execute(db);
      await sql`create table entity_keys (key text primary key, entity bigint not null)`.execute(db);
      await sql`create index entity_keys_entity on entity_keys (entity)`.execute(db);
      // Names seen for a key, per visibility class of where they were seen (a mail display name
      // must not reach a scope without mail).
      await sql`create table key_names (
        key text not null, name text not null, kind text not null, labels text[] not null, spam boolean not null,
        n integer not null, primary key (key, name, kind, labels, spam)
      )`.execute(db);
      // Observations of a key (a link end with its evidence item), per visibility class: a thing
      // is visible to a scope iff one of its keys was observed in something the scope may see.
      await sql`create table key_scope (
        key text not null, kind text not null, labels text[] not null, spam boolean not null, n integer not null,
        primary key (key, kind, labels, spam)
      )`.execute(db);
      await sql`create table mention_terms (term text not null, entity bigint not null, primary key (term, entity))`.execute(
        db,
      );
      await sql`create index mention_terms_prefix on mention_terms (term text_pattern_ops)`.execute(db);
      await sql`create index mention_terms_entity on mention_terms (entity)`.execute(db);
      await sql`create index mention_terms_trgm on mention_terms using gin (term gin_trgm_ops)`.execute(db);

      await sql`create table links (
        id text primary key,
        src_key text, src_entity bigint, src_item text,
        rel text not null,
        dst_key text, dst_entity bigint, dst_item text,
        valid_from timestamptz, valid_to timestamptz,
        confidence real not null,
        basis text not null check (basis in ('observed', 'inferred')),
        made_by text not null,
        pipeline text not null,
        -- Links without evidence (the owner's) are scoped like notes, by these labels.
        vis_kind text, labels text[] not null default '{}', spam boolean not null default false,
        status text not null default 'active' check (status in ('active', 'retracted')),
        check ((src_entity is null) <> (src_item is null)),
        check ((dst_entity is null) <> (dst_item is null))
      )`.execute(db);
      await sql`create index links_src on links (src_entity, valid_from desc) where src_entity is not null`.execute(db);
      await sql`create index links_dst on links (dst_entity, valid_from desc) where dst_entity is not null`.execute(db);
      await sql`create index links_src_item on links (src_item) where src_item is not null`.execute(db);
      await sql`create index links_dst_item on links (dst_item) where dst_item is not null`.execute(db);
      await sql`create index links_src_key on links (src_key) where src_key is not null`.execute(db);
      await sql`create index links_dst_key on links (dst_key) where dst_key is not null`.execute(db);
      await sql`create index links_review on links (confidence) where basis = 'inferred' and status = 'active'`.execute(
        db,
      );
      // `via`: the item whose reading produced this evidence (a pipeline's run over it), '' for a caller's.
      await sql`create table evidence (
        link text not null, item text not null, part text not null default '', quote text, via text not null default '',
        primary key (link, item, part, via)
      )`.execute(db);
      await sql`create index evidence_item on evidence (item)`.execute(db);
      await sql`create index evidence_via on evidence (via) where via <> ''`.execute(db);
      // The owner's word on a claim, whoever states it: rejected claims stay hidden when a
      // pipeline infers them again; confirmed ones may support further inferences (seed §3.3).
      await sql`create table verdicts (
        claim text primary key,
        src_key text, src_entity bigint, src_item text, rel text not null,
        dst_key text, dst_entity bigint, dst_item text,
        verdict text not null check (verdict in ('confirmed', 'rejected')),
        decided_at timestamptz not null
      )`.execute(db);
      await sql`create index verdicts_src on verdicts (src_entity, rel)`.execute(db);
      // Inferences that broke the honesty rule (support that was itself an unconfirmed inference).
      await sql`create table refused_evidence (
        link text not null, made_by text not null, item text not null, evidence text not null, reason text not null,
        primary key (link, evidence)
      )`.execute(db);
      await sql`create index refused_evidence_item on refused_evidence (item)`.execute(db);

      await sql`create table merges (
        merge_id text primary key, from_entity bigint not null, into_entity bigint not null,
        keys text[] not null, at timestamptz not null
      )`.execute(db);
      await sql`create table review_dismissed (suggestion text primary key)`.execute(db);

      // Trails are writing: scoped like notes (kind and spam are constant, for visibleTo).
      await sql`create table trails (
        id text primary key, name text not null, description text not null, labels text[] not null,
        kind text not null default 'note', spam boolean not null default false,
        made_by text not null, created_at timestamptz not null
      )`.execute(db);
      await sql`create table trail_steps (
        step_id text primary key, trail_id text not null, ordinal integer not null,
        target_key text, target_entity bigint, target_item text, comment text,
        unique (trail_id, ordinal)
      )`.execute(db);
      await sql`create index trail_steps_entity on trail_steps (target_entity) where target_entity is not null`.execute(
        db,
      );
      await sql`create index trail_steps_item on trail_steps (target_item) where target_item is not null`.execute(db);
      await sql`create table trail_comments (
        id text primary key, trail_id text not null, comment text not null, made_by text not null, at timestamptz not null
      )`.execute(db);
      await sql`create index trail_comments_trail on trail_comments (trail_id, at)`.execute(db);
    },
  },
  {
    name: '002_brief_indexes',
    async up(db) {
      // `client:acme` finds the organization at acme.<anything> (context briefs).
      await sql`create index entities_org_label on entities ((split_part(substr(key, 5), '.', 1))) where kind = 'org' and merged_into is null`.execute(
        db,
      );
      // Briefs read notes and open commitments without scanning all items and links.
      await sql`create index items_notes on items (occurred_at desc) where kind = 'note'`.execute(db);
      await sql`create index links_commitments on links (valid_to) where rel = 'committed_to' and status = 'active'`.execute(
        db,
      );
      // Links between things (facts, direct neighbours), apart from the many links to items.
      await sql`create index links_things_src on links (src_entity, rel) where dst_entity is not null`.execute(db);
      await sql`create index links_things_dst on links (dst_entity, rel) where src_entity is not null`.execute(db);
      // @-mentions of a common prefix walk things from the most in touch down.
      await sql`create index entities_weight on entities (weight desc, id desc) where merged_into is null`.execute(db);
    },
  },
  {
    name: '003_mention_prefixes',
    async up(db) {
      // @-mentions read a prefix's things best first straight off one index: each short prefix of
      // each term, with the thing's weight tier (see tierSql) in the row.
      await sql`create table mention_prefixes (
        prefix text not null, exact boolean not null, tier smallint not null, entity bigint not null,
        primary key (entity, prefix)
      )`.execute(db);
      await sql`create index mention_prefixes_order on mention_prefixes (prefix, exact desc, tier desc, entity)`.execute(
        db,
      );
      await writePrefixes(db);
    },
  },
  {
    name: '004_timeline_order',
    async up(db) {
      // Timelines read a thing's newest links `valid_from desc nulls last`: an index in that very
      // order is read for the first few rows, one with nulls first is sorted whole (a hub: 50,000 rows).
      for (const end of ['src', 'dst']) {
        await sql`drop index ${sql.id(`links_${end}`)}`.execute(db);
        await sql`create index ${sql.id(`links_${end}`)} on links (${sql.id(`${end}_entity`)}, valid_from desc nulls last)
          where ${sql.id(`${end}_entity`)} is not null`.execute(db);
      }
    },
  },
  {
    name: '005_weight_unindexed',
    async up(db) {
      // Every observation updates a thing's weight; with no index on it (@-mentions order by the
      // prefixes' tiers now) and room left on each page, the update is a heap-only one.
      await sql`drop index entities_weight`.execute(db);
      await sql`alter table entities set (fillfactor = 80)`.execute(db);
    },
  },
  {
    name: '006_thread_titles',
    async up(db) {
      // @-mentions that match fewer things than asked look for threads by subject: by trigram, a
      // word no subject has costs a few index pages instead of a pass over every message.
      await sql`create index items_thread_title on items using gin (lower(title) gin_trgm_ops)
        where kind = 'email' and thread_key is not null`.execute(db);
    },
  },
  {
    name: '007_places',
    async up(db) {
      // What the media pipeline says of a GeoNames place (photo.analyzed, video.analyzed): its
      // country and admin area, shown as the place's attrs; it goes when its key is pruned.
      await sql`create table places (
        key text primary key, geonames_id integer not null, country text not null, admin1 text not null,
        latitude double precision not null, longitude double precision not null
      )`.execute(db);
    },
  },
  {
    name: '008_commitments',
    async up(db) {
      // Commitments read in items (tier 0's rules, tier 2's models), one row per maker task's
      // promise; the owner's status apart, by the same id, so a re-run of the maker keeps it.
      await sql`create table commitments (
        id text primary key, item text not null, pipeline text not null, made_by text not null,
        due text, body jsonb not null
      )`.execute(db);
      await sql`create index commitments_item on commitments (item, pipeline)`.execute(db);
      await sql`create table commitment_status (
        id text primary key, status text not null check (status in ('open', 'done', 'dropped')), set_at timestamptz not null
      )`.execute(db);
    },
  },
  {
    name: '009_papers',
    async up(db) {
      // The papers tier 0 has read (paper.extracted), one row per item: what a reference is
      // resolved against (arXiv id, DOI, a title alike by trigrams within a year) and a paper
      // thing's attrs.
      await sql`create table papers (
        item text primary key, key text not null, title text not null, norm_title text not null,
        year integer, doi text, arxiv text, venue text
      )`.execute(db);
      await sql`create index papers_key on papers (key)`.execute(db);
      await sql`create index papers_doi on papers (doi) where doi is not null`.execute(db);
      await sql`create index papers_arxiv on papers (arxiv) where arxiv is not null`.execute(db);
      await sql`create index papers_title on papers using gin (norm_title gin_trgm_ops)`.execute(db);
    },
  },
  {
    name: '010_paper_stubs',
    async up(db) {
      // Stub papers references made, by title, so a paper read later finds the stubs made for it
      // through the trigram index (a row whose key was pruned is ignored: it is joined to entity_keys).
      await sql`create table paper_stubs (key text primary key, norm_title text not null, year integer)`.execute(db);
      await sql`create index paper_stubs_title on paper_stubs using gin (norm_title gin_trgm_ops)`.execute(db);
    },
  },
  {
    name: '011_thread_joins',
    async up(db) {
      // Thread keys that thread.joined made another's: a message arriving later with one of them
      // is in the thread it was joined into.
      await sql`create table thread_joins (merged text primary key, key text not null)`.execute(db);
      await sql`create index thread_joins_key on thread_joins (key)`.execute(db);
    },
  },
  {
    name: '012_org_domains',
    async up(db) {
      // Mail domains that are organizations, with what made them one (domain/orgs.ts), and the
      // people seen at domains that are none yet, one row per message: theirs until more evidence.
      await sql`create table org_domains (domain text primary key, evidence text not null)`.execute(db);
      await sql`create table domain_writers (
        domain text not null, person text not null, name text not null, counts boolean not null,
        item text not null, at timestamptz, primary key (domain, person, item)
      )`.execute(db);
      await sql`create index domain_writers_item on domain_writers (item)`.execute(db);
      await sql`create index domain_writers_person on domain_writers (person)`.execute(db);
    },
  },
  {
    name: '013_domain_writers_kept',
    async up(db) {
      // A domain's writers stay once it is an organization, with the evidence each message gave
      // on its own (`standing`), so a deletion can tell whether the rest still make it one; the
      // evidence in words is read from them.
      await sql`alter table domain_writers add column standing text`.execute(db);
      await sql`alter table org_domains drop column evidence`.execute(db);
    },
  },
  {
    name: '014_coarser_mention_tiers',
    async up(db) {
      // Tiers of one weight each up to 4 (not 16), then one per doubling (not four): see tierSql.
      await sql`update mention_prefixes m set tier = ${tierSql(sql`e.weight`)}
        from entities e where e.id = m.entity and m.tier <> ${tierSql(sql`e.weight`)}`.execute(db);
    },
  },
  {
    name: '015_shorter_mention_prefixes',
    async up(db) {
      // Prefixes up to 5 characters, not 8 (see PREFIX_CHARS): longer ones are read from the terms.
      await sql`delete from mention_prefixes where length(prefix) > 5`.execute(db);
    },
  },
];
