import type { Actions } from '../domain/rules.js';

/** The mail-sync read model: accounts and how far their sync has come, which item mirrors which Gmail message, and memex changes still to carry to Gmail. */
export interface AccountsTable {
  account: string;
  provider: 'google' | 'imap';
  scopes: string[];
  client_id: string;
  status: 'active' | 'needs_reauth';
  reason: string | null;
  connected_at: Date;
  phase: 'not_started' | 'full' | 'incremental';
  history_id: string | null;
  /** Full sync: the next messages.list page ('' is the first). */
  page_token: string | null;
  messages: number;
  last_progress_at: Date | null;
  seq: number;
}

export interface GmailMessagesTable {
  item_id: string;
  account: string;
  gmail_id: string;
  thread_id: string;
  labels: string[];
  history_id: string;
  seq: number;
}

/** A memex change (mail.flags_changed) to a mirrored message not yet written to Gmail. */
export interface PushesTable {
  event_id: string;
  item_id: string;
  account: string;
  change: {
    read?: boolean;
    starred?: boolean;
    archived?: boolean;
    trashed?: boolean;
    labels_added?: string[];
    labels_removed?: string[];
  };
  seq: number;
}

/** A mail written in the memex: scheduled, a draft, being sent (an attempt logged), sent, cancelled, failed, or a deleted draft. */
export interface OutgoingTable {
  id: string;
  account: string;
  state: 'scheduled' | 'draft' | 'sending' | 'sent' | 'cancelled' | 'failed' | 'deleted';
  /** Why Gmail refused it (failed). */
  error: string | null;
  mime_sha256: string;
  message_id: string;
  thread_id: string | null;
  subject: string;
  to: string[];
  send_at: Date | null;
  attempts: number;
  /** When the last send was attempted (an IMAP account's receipt is waited for from then). */
  attempted_at: Date | null;
  gmail_id: string | null;
  gmail_draft_id: string | null;
  /** The version of the draft (its MIME blob) the Gmail draft holds: when it differs from mime_sha256 Gmail's is updated. */
  gmail_draft_sha256: string | null;
  created_at: Date;
  seq: number;
}

export interface RulesTable {
  id: string;
  name: string;
  query: string;
  actions: Actions;
  position: number;
  applied: number;
  seq: number;
}

/** Which rule acted on which message: a rule acts on a message once. */
export interface RuleApplicationsTable {
  rule_id: string;
  item_id: string;
  seq: number;
}

/** A mail an agent proposed, waiting for (or past) the owner's decision. */
export interface ProposalsTable {
  id: string;
  account: string;
  proposer: string;
  request_sha256: string;
  subject: string;
  to: string[];
  state: 'pending' | 'approved' | 'rejected';
  outgoing_id: string | null;
  created_at: Date;
  seq: number;
}

/** A plain IMAP/SMTP account's servers (its password is in the encrypted store, never here). */
export interface ImapAccountsTable {
  account: string;
  host: string;
  port: number;
  tls: boolean;
  user: string;
  smtp_host: string;
  smtp_port: number;
  smtp_tls: boolean;
  seq: number;
}

/** Where an IMAP folder's sync resumes: UIDVALIDITY, the next UID, CONDSTORE's HIGHESTMODSEQ. */
export interface ImapFoldersTable {
  account: string;
  folder: string;
  uidvalidity: string;
  uidnext: number;
  highestmodseq: string | null;
  seq: number;
}

/** Which item mirrors which IMAP message (folder, UIDVALIDITY, UID) and its flags. */
export interface ImapMessagesTable {
  item_id: string;
  account: string;
  folder: string;
  uidvalidity: string;
  uid: number;
  flags: string[];
  labels: string[];
  seq: number;
}

export interface MailSyncDatabase {
  imap_accounts: ImapAccountsTable;
  imap_folders: ImapFoldersTable;
  imap_messages: ImapMessagesTable;
  proposals: ProposalsTable;
  rules: RulesTable;
  rule_applications: RuleApplicationsTable;
  outgoing: OutgoingTable;
  accounts: AccountsTable;
  gmail_messages: GmailMessagesTable;
  pushes: PushesTable;
}
