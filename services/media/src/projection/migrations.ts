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
];
