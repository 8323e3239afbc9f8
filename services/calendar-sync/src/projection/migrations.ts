import { sql } from 'kysely';
import type { Migration } from '@memex/db';

export const calendarMigrations: Migration[] = [
  {
    name: '001_calendar',
    async up(db) {
      await sql`create table components (
        item_id text not null,
        position integer not null,
        uid text not null,
        rid text not null,
        method text not null,
        sequence integer not null,
        data jsonb not null,
        labels text[] not null,
        kind text not null,
        spam boolean not null,
        recorded_at timestamptz not null,
        seq bigint not null,
        primary key (item_id, position)
      )`.execute(db);
      await sql`create index components_uid on components (uid)`.execute(db);
      await sql`create table events (
        uid text not null,
        rid text not null,
        status text not null,
        summary text not null,
        location text not null,
        all_day boolean not null,
        start timestamptz not null,
        "end" timestamptz not null,
        start_date text,
        end_date text,
        time_zone text,
        transparent boolean not null,
        organizer jsonb,
        attendees jsonb not null,
        source text,
        expanded_until timestamptz,
        items text[] not null,
        labels text[] not null,
        kind text not null,
        spam boolean not null,
        primary key (uid, rid)
      )`.execute(db);
      // Series that a window past their expanded instances must expand on the fly.
      await sql`create index events_open_series on events (expanded_until) where expanded_until is not null`.execute(
        db,
      );
      await sql`create table instances (
        uid text not null,
        rid text not null,
        event_rid text not null,
        span tstzrange not null,
        start timestamptz not null,
        "end" timestamptz not null,
        busy boolean not null,
        primary key (uid, rid)
      )`.execute(db);
      await sql`create index instances_span on instances using gist (span)`.execute(db);
    },
  },
  {
    name: '002_google',
    async up(db) {
      await sql`create table google_accounts (account text primary key, scopes text[] not null)`.execute(db);
      await sql`create table google_calendars (
        account text not null,
        calendar_id text not null,
        summary text not null,
        sync_token text,
        synced_at timestamptz not null,
        primary key (account, calendar_id)
      )`.execute(db);
      await sql`create table google_events (
        account text not null,
        calendar_id text not null,
        google_id text not null,
        etag text not null,
        uid text not null,
        primary key (account, calendar_id, google_id)
      )`.execute(db);
    },
  },
  {
    name: '003_google_contacts',
    async up(db) {
      await sql`create table google_contact_accounts (account text primary key, sync_token text, synced_at timestamptz not null)`.execute(
        db,
      );
      await sql`create table google_contacts (
        account text not null,
        resource_name text not null,
        etag text not null,
        item_id text not null,
        primary key (account, resource_name)
      )`.execute(db);
    },
  },
  {
    name: '004_google_contact_fields',
    async up(db) {
      await sql`alter table google_contacts add column fields jsonb`.execute(db);
    },
  },
  {
    name: '005_contact_candidates_dismissed',
    async up(db) {
      await sql`create table contact_candidates_dismissed (account text not null, address text not null, primary key (account, address))`.execute(
        db,
      );
      await sql`alter table google_contacts add column emails text[]`.execute(db);
    },
  },
];
