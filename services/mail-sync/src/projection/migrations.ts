import { sql } from 'kysely';
import type { Migration } from '@memex/db';

export const mailSyncMigrations: Migration[] = [
  {
    name: '001_mail_sync',
    async up(db) {
      await sql`create table accounts (
        account text primary key,
        provider text not null,
        scopes text[] not null,
        client_id text not null,
        status text not null,
        reason text,
        connected_at timestamptz not null,
        phase text not null,
        history_id text,
        page_token text,
        messages integer not null,
        last_progress_at timestamptz,
        seq bigint not null
      )`.execute(db);
      await sql`create table gmail_messages (
        item_id text primary key,
        account text not null,
        gmail_id text not null,
        thread_id text not null,
        labels text[] not null,
        history_id text not null,
        seq bigint not null,
        unique (account, gmail_id)
      )`.execute(db);
      await sql`create table pushes (
        event_id text primary key,
        item_id text not null,
        account text not null,
        change jsonb not null,
        seq bigint not null
      )`.execute(db);
      await sql`create index pushes_account on pushes (account, seq)`.execute(db);
    },
  },
  {
    name: '002_outgoing',
    async up(db) {
      await sql`create table outgoing (
        id text primary key,
        account text not null,
        state text not null,
        mime_sha256 text not null,
        message_id text not null,
        thread_id text,
        subject text not null,
        "to" text[] not null,
        send_at timestamptz,
        attempts integer not null default 0,
        gmail_id text,
        gmail_draft_id text,
        created_at timestamptz not null,
        seq bigint not null
      )`.execute(db);
      await sql`create index outgoing_due on outgoing (send_at) where state in ('scheduled', 'sending')`.execute(db);
    },
  },
  {
    name: '003_rules',
    async up(db) {
      await sql`create table rules (
        id text primary key,
        name text not null,
        query text not null,
        actions jsonb not null,
        position integer not null,
        applied integer not null default 0,
        seq bigint not null
      )`.execute(db);
      await sql`create table rule_applications (
        rule_id text not null,
        item_id text not null,
        seq bigint not null,
        primary key (rule_id, item_id)
      )`.execute(db);
    },
  },
  {
    name: '004_proposals',
    async up(db) {
      await sql`create table proposals (
        id text primary key,
        account text not null,
        proposer text not null,
        request_sha256 text not null,
        subject text not null,
        "to" text[] not null,
        state text not null,
        outgoing_id text,
        created_at timestamptz not null,
        seq bigint not null
      )`.execute(db);
    },
  },
  {
    name: '005_outgoing_failed',
    async up(db) {
      await sql`alter table outgoing add column error text`.execute(db);
    },
  },
  {
    name: '006_editable_drafts',
    async up(db) {
      await sql`alter table outgoing add column gmail_draft_sha256 text`.execute(db);
    },
  },
  {
    name: '007_imap',
    async up(db) {
      await sql`create table imap_accounts (
        account text primary key,
        host text not null,
        port integer not null,
        tls boolean not null,
        "user" text not null,
        smtp_host text not null,
        smtp_port integer not null,
        smtp_tls boolean not null,
        seq bigint not null
      )`.execute(db);
      await sql`create table imap_folders (
        account text not null,
        folder text not null,
        uidvalidity text not null,
        uidnext integer not null,
        highestmodseq text,
        seq bigint not null,
        primary key (account, folder)
      )`.execute(db);
      await sql`create table imap_messages (
        item_id text primary key,
        account text not null,
        folder text not null,
        uidvalidity text not null,
        uid integer not null,
        flags text[] not null,
        labels text[] not null,
        seq bigint not null
      )`.execute(db);
      await sql`create index imap_messages_folder on imap_messages (account, folder, uid)`.execute(db);
      await sql`alter table outgoing add column attempted_at timestamptz`.execute(db);
    },
  },
];
