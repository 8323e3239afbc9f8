import { Injectable } from '@nestjs/common';
import { sql, type Transaction } from 'kysely';
import {
  AccountConnected,
  AccountNeedsReauth,
  AccountRemoved,
  GmailMessageSynced,
  GmailSyncProgressed,
  ImapAccountConnected,
  ImapFolderSynced,
  ImapMessageSynced,
  ItemDeleted,
  MailFlagsChanged,
  OutgoingAttempted,
  OutgoingCancelled,
  OutgoingDraftDeleted,
  OutgoingDraftRemoved,
  OutgoingDraftSaved,
  OutgoingDraftUpdated,
  OutgoingFailed,
  OutgoingQueued,
  OutgoingSent,
  ProposalCreated,
  ProposalDecided,
  RuleAdded,
  RuleApplied,
  RuleRemoved,
  type EventOf,
} from '@memex/contracts';
import { On, Projector } from '@memex/runtime';
import { mailSyncMigrations } from './migrations.js';
import type { AccountsTable, MailSyncDatabase } from './schema.js';

type Trx = Transaction<MailSyncDatabase>;

/**
 * Everything the sync resumes from after a crash, rebuilt from the log: accounts and their
 * progress, the Gmail message behind each mirrored item with its labels, and the memex changes
 * not yet written to Gmail (a change leaves the queue when the `gmail.message_synced` that
 * carried it out is logged).
 */
@Injectable()
@Projector({ name: 'mail_sync', migrations: mailSyncMigrations })
export class MailSyncProjector {
  @On(AccountConnected)
  async connected(trx: Trx, event: EventOf<typeof AccountConnected>, seq: number): Promise<void> {
    const { account, provider, scopes, client_id } = event.data;
    await this.connect(trx, { account, provider, scopes, client_id }, event.occurred_at, seq);
  }

  /** An account row; connected again (after a revoked grant or a refused login), the sync resumes where it stopped. */
  private async connect(
    trx: Trx,
    row: Pick<AccountsTable, 'account' | 'provider' | 'scopes' | 'client_id'>,
    occurredAt: string,
    seq: number,
  ): Promise<void> {
    await trx
      .insertInto('accounts')
      .values({
        ...row,
        status: 'active',
        reason: null,
        connected_at: new Date(occurredAt),
        phase: 'not_started',
        history_id: null,
        page_token: null,
        messages: 0,
        last_progress_at: null,
        seq,
      })
      .onConflict((oc) =>
        oc
          .column('account')
          .doUpdateSet({ scopes: row.scopes, client_id: row.client_id, status: 'active', reason: null, seq }),
      )
      .execute();
  }

  @On(AccountNeedsReauth)
  async needsReauth(trx: Trx, event: EventOf<typeof AccountNeedsReauth>, seq: number): Promise<void> {
    await trx
      .updateTable('accounts')
      .set({ status: 'needs_reauth', reason: event.data.reason, seq })
      .where('account', '=', event.data.account)
      .execute();
  }

  @On(ImapAccountConnected)
  async imapConnected(trx: Trx, event: EventOf<typeof ImapAccountConnected>, seq: number): Promise<void> {
    const { account, ...servers } = event.data;
    await this.connect(trx, { account, provider: 'imap', scopes: [], client_id: '' }, event.occurred_at, seq);
    await trx
      .insertInto('imap_accounts')
      .values({ account, ...servers, seq })
      .onConflict((oc) => oc.column('account').doUpdateSet({ ...servers, seq }))
      .execute();
  }

  @On(ImapFolderSynced)
  async imapFolderSynced(trx: Trx, event: EventOf<typeof ImapFolderSynced>, seq: number): Promise<void> {
    const { account, folder, uidvalidity, uidnext, highestmodseq } = event.data;
    await trx
      .insertInto('imap_folders')
      .values({ account, folder, uidvalidity, uidnext, highestmodseq, seq })
      .onConflict((oc) => oc.columns(['account', 'folder']).doUpdateSet({ uidvalidity, uidnext, highestmodseq, seq }))
      .execute();
    await trx
      .updateTable('accounts')
      .set({ phase: 'incremental', last_progress_at: new Date(event.recorded_at), seq })
      .where('account', '=', account)
      .execute();
  }

  @On(ImapMessageSynced)
  async imapMessageSynced(trx: Trx, event: EventOf<typeof ImapMessageSynced>, seq: number): Promise<void> {
    const { id, account, folder, uidvalidity, uid, flags, labels, pushed } = event.data;
    const row = { account, folder, uidvalidity, uid, flags, labels, seq };
    const inserted = await trx
      .insertInto('imap_messages')
      .values({ item_id: id, ...row })
      .onConflict((oc) => oc.column('item_id').doUpdateSet(row))
      .returning(sql<boolean>`xmax = 0`.as('fresh'))
      .executeTakeFirst();
    if (inserted?.fresh)
      await trx
        .updateTable('accounts')
        .set((eb) => ({ messages: eb('messages', '+', 1) }))
        .where('account', '=', account)
        .execute();
    if (pushed) await trx.deleteFrom('pushes').where('event_id', '=', pushed).execute();
  }

  @On(AccountRemoved)
  async removed(trx: Trx, event: EventOf<typeof AccountRemoved>): Promise<void> {
    await trx.deleteFrom('accounts').where('account', '=', event.data.account).execute();
    await trx.deleteFrom('imap_accounts').where('account', '=', event.data.account).execute();
    await trx.deleteFrom('pushes').where('account', '=', event.data.account).execute();
  }

  @On(GmailSyncProgressed)
  async progressed(trx: Trx, event: EventOf<typeof GmailSyncProgressed>, seq: number): Promise<void> {
    const { account, phase, history_id, page_token, messages } = event.data;
    await trx
      .updateTable('accounts')
      .set((eb) => ({
        phase: page_token === null ? 'incremental' : phase,
        history_id,
        page_token,
        messages: eb('messages', '+', messages),
        last_progress_at: new Date(event.recorded_at),
        seq,
      }))
      .where('account', '=', account)
      .execute();
  }

  @On(GmailMessageSynced)
  async synced(trx: Trx, event: EventOf<typeof GmailMessageSynced>, seq: number): Promise<void> {
    const { id, account, gmail_id, thread_id, labels, history_id, pushed } = event.data;
    await trx
      .insertInto('gmail_messages')
      .values({ item_id: id, account, gmail_id, thread_id, labels, history_id, seq })
      .onConflict((oc) => oc.column('item_id').doUpdateSet({ account, gmail_id, thread_id, labels, history_id, seq }))
      .execute();
    if (pushed) await trx.deleteFrom('pushes').where('event_id', '=', pushed).execute();
  }

  /** A change made in the memex to a mirrored message waits here until it is in Gmail. */
  @On(MailFlagsChanged)
  async flagsChanged(trx: Trx, event: EventOf<typeof MailFlagsChanged>, seq: number): Promise<void> {
    if (event.actor.kind === 'connector') return;
    const { id, ...change } = event.data;
    const mirrored =
      (await trx.selectFrom('gmail_messages').select('account').where('item_id', '=', id).executeTakeFirst()) ??
      (await trx.selectFrom('imap_messages').select('account').where('item_id', '=', id).executeTakeFirst());
    if (!mirrored) return;
    await trx
      .insertInto('pushes')
      .values({
        event_id: event.id,
        item_id: id,
        account: mirrored.account,
        change: JSON.stringify(change) as never,
        seq,
      })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  @On(OutgoingQueued)
  async queued(trx: Trx, event: EventOf<typeof OutgoingQueued>, seq: number): Promise<void> {
    const { id, account, mime_sha256, message_id, thread_id, subject, to, send_at } = event.data;
    await trx
      .insertInto('outgoing')
      .values({
        id,
        account,
        state: send_at ? 'scheduled' : 'draft',
        mime_sha256,
        message_id,
        thread_id,
        subject,
        to,
        send_at: send_at ? new Date(send_at) : null,
        attempts: 0,
        attempted_at: null,
        error: null,
        gmail_id: null,
        gmail_draft_id: null,
        gmail_draft_sha256: null,
        created_at: new Date(event.occurred_at),
        seq,
      })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  @On(OutgoingCancelled)
  async cancelled(trx: Trx, event: EventOf<typeof OutgoingCancelled>, seq: number): Promise<void> {
    await trx
      .updateTable('outgoing')
      .set({ state: 'cancelled', seq })
      .where('id', '=', event.data.id)
      .where('state', '=', 'scheduled')
      .execute();
  }

  @On(OutgoingAttempted)
  async attempted(trx: Trx, event: EventOf<typeof OutgoingAttempted>, seq: number): Promise<void> {
    await trx
      .updateTable('outgoing')
      .set({ state: 'sending', attempts: event.data.attempt, attempted_at: new Date(event.occurred_at), seq })
      .where('id', '=', event.data.id)
      .where('state', 'in', ['scheduled', 'sending'])
      .execute();
  }

  @On(OutgoingSent)
  async sent(trx: Trx, event: EventOf<typeof OutgoingSent>, seq: number): Promise<void> {
    await trx
      .updateTable('outgoing')
      .set({ state: 'sent', gmail_id: event.data.gmail_id, thread_id: event.data.thread_id, seq })
      .where('id', '=', event.data.id)
      .execute();
  }

  @On(OutgoingFailed)
  async failed(trx: Trx, event: EventOf<typeof OutgoingFailed>, seq: number): Promise<void> {
    await trx
      .updateTable('outgoing')
      .set({ state: 'failed', error: event.data.reason, seq })
      .where('id', '=', event.data.id)
      .where('state', '!=', 'sent')
      .execute();
  }

  @On(OutgoingDraftSaved)
  async draftSaved(trx: Trx, event: EventOf<typeof OutgoingDraftSaved>, seq: number): Promise<void> {
    const { id, gmail_draft_id, mime_sha256 } = event.data;
    await trx
      .updateTable('outgoing')
      .set((eb) => ({ gmail_draft_id, gmail_draft_sha256: mime_sha256 ?? eb.ref('mime_sha256'), seq }))
      .where('id', '=', id)
      .execute();
  }

  @On(OutgoingDraftUpdated)
  async draftUpdated(trx: Trx, event: EventOf<typeof OutgoingDraftUpdated>, seq: number): Promise<void> {
    const { id, mime_sha256, subject, to } = event.data;
    await trx
      .updateTable('outgoing')
      .set({ mime_sha256, subject, to, seq })
      .where('id', '=', id)
      .where('state', '=', 'draft')
      .execute();
  }

  @On(OutgoingDraftDeleted)
  async draftDeleted(trx: Trx, event: EventOf<typeof OutgoingDraftDeleted>, seq: number): Promise<void> {
    await trx
      .updateTable('outgoing')
      .set({ state: 'deleted', seq })
      .where('id', '=', event.data.id)
      .where('state', '=', 'draft')
      .execute();
  }

  @On(OutgoingDraftRemoved)
  async draftRemoved(trx: Trx, event: EventOf<typeof OutgoingDraftRemoved>, seq: number): Promise<void> {
    await trx
      .updateTable('outgoing')
      .set({ gmail_draft_id: null, gmail_draft_sha256: null, seq })
      .where('id', '=', event.data.id)
      .execute();
  }

  @On(RuleAdded)
  async ruleAdded(trx: Trx, event: EventOf<typeof RuleAdded>, seq: number): Promise<void> {
    const { id, name, query, actions, position } = event.data;
    await trx
      .insertInto('rules')
      .values({ id, name, query, actions: JSON.stringify(actions) as never, position, applied: 0, seq })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  @On(RuleRemoved)
  async ruleRemoved(trx: Trx, event: EventOf<typeof RuleRemoved>): Promise<void> {
    await trx.deleteFrom('rules').where('id', '=', event.data.id).execute();
  }

  @On(RuleApplied)
  async ruleApplied(trx: Trx, event: EventOf<typeof RuleApplied>, seq: number): Promise<void> {
    const { rule_id, item_id } = event.data;
    const inserted = await trx
      .insertInto('rule_applications')
      .values({ rule_id, item_id, seq })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) {
      await trx
        .updateTable('rules')
        .set((eb) => ({ applied: eb('applied', '+', 1) }))
        .where('id', '=', rule_id)
        .execute();
    }
  }

  @On(ProposalCreated)
  async proposed(trx: Trx, event: EventOf<typeof ProposalCreated>, seq: number): Promise<void> {
    const { id, account, proposer, request_sha256, subject, to } = event.data;
    await trx
      .insertInto('proposals')
      .values({
        id,
        account,
        proposer,
        request_sha256,
        subject,
        to,
        state: 'pending',
        outgoing_id: null,
        created_at: new Date(event.occurred_at),
        seq,
      })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  @On(ProposalDecided)
  async decided(trx: Trx, event: EventOf<typeof ProposalDecided>, seq: number): Promise<void> {
    const { id, approved, outgoing_id } = event.data;
    await trx
      .updateTable('proposals')
      .set({ state: approved ? 'approved' : 'rejected', outgoing_id, seq })
      .where('id', '=', id)
      .where('state', '=', 'pending')
      .execute();
  }

  @On(ItemDeleted)
  async deleted(trx: Trx, event: EventOf<typeof ItemDeleted>): Promise<void> {
    await trx.deleteFrom('gmail_messages').where('item_id', '=', event.data.id).execute();
    await trx.deleteFrom('imap_messages').where('item_id', '=', event.data.id).execute();
    await trx.deleteFrom('pushes').where('item_id', '=', event.data.id).execute();
  }
}
