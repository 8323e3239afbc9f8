import { sql } from 'kysely';
import type { Migration } from '@memex/db';

/**
 * The insights read model. Notes (memex notes and Markdown documents) with what detection reads
 * and what scope checks need; their item-level vectors per embedding space; the triaged signals;
 * inferences and their evidence, which outlives the notes it cites.
 */
export const insightsMigrations: Migration[] = [
  {
    name: '001_insights',
    async up(db) {
      await sql`create table notes (
        id text primary key,
        kind text not null,
        labels text[] not null,
        spam boolean not null,
        title text not null,
        aliases text[] not null,
        tags text[] not null,
        links text[] not null,
        front_matter jsonb not null,
        content_hash text not null,
        revision bigint not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        seq bigint not null
      )`.execute(db);
      await sql`create table note_vectors (
        note_id text not null,
        space text not null,
        vector bytea not null,
        primary key (note_id, space)
      )`.execute(db);
      await sql`create index note_vectors_space on note_vectors (space)`.execute(db);
      await sql`create table tombstones (id text primary key)`.execute(db);
      // The engine state row: what the notes are now (notes_seq, chosen space) and what the
      // last detection run saw (the dirty flag).
      await sql`create table engine_state (
        id integer primary key check (id = 1),
        notes_seq bigint not null,
        chosen_space text,
        fingerprint text,
        detected_notes_seq bigint,
        config_hash text,
        detected_at timestamptz
      )`.execute(db);
      await sql`insert into engine_state (id, notes_seq) values (1, 0)`.execute(db);
      await sql`create table detection_pieces (
        run text not null,
        piece integer not null,
        signals json not null,
        primary key (run, piece)
      )`.execute(db);
      await sql`create table signals (
        key text primary key,
        id integer not null unique,
        kind text not null,
        note_ids text[] not null,
        score double precision not null,
        detail json not null,
        status text not null,
        snoozed_until timestamptz,
        first_detected_at timestamptz not null,
        status_changed_at timestamptz,
        present boolean not null,
        inherited_from text,
        judged_note_ids text[],
        inference_id integer
      )`.execute(db);
      await sql`create table inferences (
        id integer primary key,
        title text not null,
        summary text not null,
        confidence double precision not null,
        model_id text not null,
        signal_key text,
        made_by text not null,
        minted_at timestamptz not null,
        revision integer not null
      )`.execute(db);
      // One row per cited note, kept when the note is deleted (orphaned, not silently shrunk);
      // title and visibility follow the note while it exists.
      await sql`create table inference_sources (
        inference_id integer not null,
        ordinal integer not null,
        note_id text not null,
        content_hash text not null,
        title text not null,
        kind text,
        labels text[],
        spam boolean,
        primary key (inference_id, ordinal)
      )`.execute(db);
      await sql`create index inference_sources_note on inference_sources (note_id)`.execute(db);
    },
  },
];
