import { sql } from 'kysely';
import type { Migration } from '@memex/db';

/** The media read model: photos, videos and recordings with their metadata, renditions, keyframes and place, and deleted items. */
export const mediaMigrations: Migration[] = [
  {
    name: '001_media',
    async up(db) {
      await sql`create table photos (
        item_id text primary key,
        revision integer not null,
        title text not null,
        kind text not null,
        labels text[] not null,
        spam boolean not null,
        occurred_at timestamptz,
        meta jsonb not null,
        latitude double precision,
        longitude double precision,
        analyzed_revision integer,
        renditions jsonb not null,
        rendition_problem text,
        place jsonb,
        place_key text,
        seq bigint not null
      )`.execute(db);
      await sql`create index photos_place on photos (place_key, occurred_at) where place_key is not null`.execute(db);
      await sql`create index photos_time on photos (occurred_at)`.execute(db);
      await sql`create table tombstones (item_id text primary key)`.execute(db);
    },
  },
  {
    // Videos and recordings join photos: one table of media items, a video's keyframes beside.
    name: '002_media_items',
    async up(db) {
      await sql`alter table photos rename to items`.execute(db);
      await sql`alter table items add column keyframes jsonb not null default '[]'`.execute(db);
    },
  },
  {
    // Faces (any model's embedding length: an unsized vector, compared only within one model),
    // their clusters, the user's moves, and the named people each item was last said to show.
    name: '003_faces',
    async up(db) {
      await sql`create table faces (
        face_id text primary key,
        item_id text not null,
        model text not null,
        box jsonb not null,
        score real not null,
        frame_at real,
        crop_sha256 text not null,
        embedding vector not null,
        cluster_id text,
        seq bigint not null
      )`.execute(db);
      await sql`create index faces_item on faces (item_id)`.execute(db);
      await sql`create index faces_cluster on faces (cluster_id)`.execute(db);
      await sql`create table face_clusters (
        cluster_id text primary key,
        model text not null,
        name text,
        person_key text,
        merged_into text
      )`.execute(db);
      await sql`create table face_moves (face_id text primary key, item_id text not null, to_cluster text)`.execute(db);
      await sql`alter table items add column people jsonb not null default '[]'`.execute(db);
      await sql`alter table items add column faces_revision integer`.execute(db);
    },
  },
  {
    // What photos show: object tags and a vision model's tags and caption (photo.tagged).
    name: '004_tags',
    async up(db) {
      await sql`alter table items add column tags text[] not null default '{}'`.execute(db);
      await sql`alter table items add column caption text`.execute(db);
      await sql`create index items_tags on items using gin (tags)`.execute(db);
    },
  },
  {
    // Items the media pipeline gave up on (media.analysis_failed), until an analysis clears them.
    name: '005_analysis_failures',
    async up(db) {
      await sql`alter table items add column analysis_failure jsonb`.execute(db);
      await sql`alter table items add column failed_at timestamptz`.execute(db);
      await sql`create index items_failed on items (failed_at) where failed_at is not null`.execute(db);
    },
  },
  {
    // A Live Photo's still and motion clip find each other by Apple's content identifier (queries/live-photos.ts).
    name: '006_live_photos',
    async up(db) {
      await sql`create index items_live_photo on items ((meta->>'contentIdentifier'))
        where meta->>'contentIdentifier' is not null`.execute(db);
    },
  },
];
