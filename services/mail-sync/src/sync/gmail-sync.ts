import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { AccountNeedsReauth, GmailMessageSynced, GmailSyncProgressed } from '@memex/contracts';
import { draftOf, EventPublisher, type Bus, type Drafted } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { GrantRevokedError, httpStatus, type gmail_v1 } from '@memex/google';
import { BUS, CONFIG, DATABASE, ServiceHost } from '@memex/runtime';
import { applyDelta, deltaOf, labelNames, sameLabels, SYSTEM_LABELS } from '../domain/labels.js';
import type { AccountsTable, MailSyncDatabase } from '../projection/schema.js';
import { connectorActor, GoogleAccounts } from './google-accounts.js';
import { byBytes, deleteItems, ingestMessages, mapLimit } from './connector.js';
import { RuleEngine } from './rule-engine.js';

/** messages.list page size during a full sync (Gmail allows 500). */
const PAGE = 100;
/** Raw messages fetched at once. */
const FETCH_CONCURRENCY = 8;

type Account = Pick<AccountsTable, 'account' | 'phase' | 'history_id' | 'page_token'>;
type Fetched = { id: string; threadId: string; labelIds: string[]; raw: string; historyId: string };

/**
 * One account's two-way sync, one cycle at a time: the memex's changes go to Gmail first, then
 * Gmail's come back (the full sync newest first, then history). Every step publishes where it
 * got to, so a restart resumes from the log: a page half done is fetched again, and its
 * messages come back from memex.ingest as duplicates of the items they already are.
 */
@Injectable()
export class GmailSync {
  private readonly logger = new Logger('memex:mail-sync');

  constructor(
    @Inject(DATABASE) private readonly db: Kysely<MailSyncDatabase>,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(CONFIG) private readonly config: MemexConfig,
    private readonly publisher: EventPublisher,
    private readonly host: ServiceHost,
    private readonly google: GoogleAccounts,
    private readonly rules: RuleEngine,
  ) {}

  /** Brings one account up to date both ways. A refused grant marks it needs_reauth and ends the cycle. */
  async cycle(account: string): Promise<void> {
    await this.caughtUp();
    const row = await this.db.selectFrom('accounts').selectAll().where('account', '=', account).executeTakeFirst();
    if (!row || row.status !== 'active') return;
    try {
      if (await this.push(account)) {
        // The pull compares Gmail's labels with the mirrors: they must hold what was just pushed,
        // or Gmail's record of our own change would look like a change made there (an echo).
        await this.caughtUp();
      }
      await this.pull(row);
    } catch (error) {
      if (!(error instanceof GrantRevokedError)) throw error;
      this.logger.warn(error.message);
      await this.publisher.publish(AccountNeedsReauth, {
        subject: `account:${account}`,
        actor: connectorActor(account),
        data: { account, reason: error.reason },
      });
      this.google.forget(account);
    }
  }

  /** Waits until this service's read model holds everything logged so far (its own last steps included). */
  async caughtUp(): Promise<void> {
    await this.host.projector!.waitFor(await this.bus.lastSeq(), this.config.minSeqTimeoutMs * 6);
  }

  /** Memex changes to mirrored messages, oldest first, written to Gmail; each logged as the state it produced. */
  private async push(account: string): Promise<boolean> {
    const pushes = await this.db
      .selectFrom('pushes')
      .selectAll()
      .where('account', '=', account)
      .orderBy('seq')
      .execute();
    if (pushes.length === 0) return false;
    const mirrors = await this.db
      .selectFrom('gmail_messages')
      .selectAll()
      .where('item_id', 'in', [...new Set(pushes.map((p) => p.item_id))])
      .execute();
    const labels = await this.labels(account);
    for (const mirror of mirrors) {
      const mine = pushes.filter((p) => p.item_id === mirror.item_id);
      const delta = deltaOf(mine.map((p) => p.change));
      const ids = async (names: string[]) => Promise.all(names.filter((n) => n !== 'TRASH').map((n) => labels.idOf(n)));
      const [add, remove] = [await ids(delta.add), await ids(delta.remove)];
      let current: gmail_v1.Schema$Message | undefined;
      try {
        if (delta.add.includes('TRASH'))
          current = await this.google.call(account, (g) =>
            g.users.messages.trash({ userId: 'me', id: mirror.gmail_id }),
          );
        if (delta.remove.includes('TRASH'))
          current = await this.google.call(account, (g) =>
            g.users.messages.untrash({ userId: 'me', id: mirror.gmail_id }),
          );
        if (add.length + remove.length > 0) {
          current = await this.google.call(account, (g) =>
            g.users.messages.modify({
              userId: 'me',
              id: mirror.gmail_id,
              requestBody: { addLabelIds: add, removeLabelIds: remove },
            }),
          );
        }
      } catch (error) {
        // Gone from Gmail: the next history read deletes it here; the change has nowhere to go.
        if (httpStatus(error) !== 404) throw error;
      }
      const after = current?.labelIds ? labelNames(current.labelIds, labels.names) : applyDelta(mirror.labels, delta);
      // One event per change carried out, so each leaves the queue (the last carries the state).
      await this.publisher.publishAll(
        mine.map((push) =>
          draftOf(GmailMessageSynced, {
            subject: `item:${mirror.item_id}`,
            actor: connectorActor(account),
            kind: 'email',
            causation_id: push.event_id,
            data: {
              id: mirror.item_id,
              account,
              gmail_id: mirror.gmail_id,
              thread_id: mirror.thread_id,
              labels: after,
              history_id: current?.historyId ?? mirror.history_id,
              pushed: push.event_id,
            },
          }),
        ),
      );
    }
    return true;
  }

  private async pull(row: Account): Promise<void> {
    if (row.phase === 'not_started') {
      const profile = await this.google.call(row.account, (g) => g.users.getProfile({ userId: 'me' }));
      await this.progress(row.account, 'full', profile.historyId!, '', 0);
      row = { ...row, phase: 'full', history_id: profile.historyId!, page_token: '' };
    }
    if (row.phase === 'full') {
      await this.fullSync(row.account, row.history_id!, row.page_token ?? '');
      return;
    }
    await this.incremental(row.account, row.history_id!);
  }

  /**
   * Every message, newest first, a page at a time: new ones ingested, known ones whose labels
   * differ logged with Gmail's labels. After the last page, mirrored messages Gmail no longer has
   * are deleted (only a resync after expired history can find such).
   */
  private async fullSync(account: string, startHistoryId: string, pageToken: string): Promise<void> {
    const labels = await this.labels(account);
    let token: string | null = pageToken;
    while (token !== null) {
      const page = await this.google.call(account, (g) =>
        g.users.messages.list({
          userId: 'me',
          maxResults: PAGE,
          includeSpamTrash: true,
          ...(token ? { pageToken: token } : {}),
        }),
      );
      const ids = (page.messages ?? []).map((m) => m.id!);
      const { synced } = await this.syncMessages(account, ids, labels.names);
      token = page.nextPageToken ?? null;
      await this.progress(account, 'full', startHistoryId, token, synced);
      if (token === null) await this.dropVanished(account, startHistoryId);
    }
  }

  /** Gmail's history since the last cycle: added, deleted and relabelled messages. A 404 (history expired) starts a full resync. */
  private async incremental(account: string, historyId: string): Promise<void> {
    const added = new Set<string>();
    const deleted = new Set<string>();
    const touched = new Set<string>();
    let latest = historyId;
    let pageToken: string | undefined;
    try {
      do {
        const page: gmail_v1.Schema$ListHistoryResponse = await this.google.call(
          account,
          (g) =>
            g.users.history.list({
              userId: 'me',
              startHistoryId: historyId,
              maxResults: 500,
              ...(pageToken ? { pageToken } : {}),
            }),
          { units: 2 },
        );
        for (const record of page.history ?? []) {
          for (const { message } of record.messagesAdded ?? []) added.add(message!.id!);
          for (const { message } of record.messagesDeleted ?? []) deleted.add(message!.id!);
          for (const { message } of [...(record.labelsAdded ?? []), ...(record.labelsRemoved ?? [])])
            touched.add(message!.id!);
        }
        latest = page.historyId ?? latest;
        pageToken = page.nextPageToken ?? undefined;
      } while (pageToken);
    } catch (error) {
      if (httpStatus(error) !== 404) throw error;
      this.logger.warn(
        `${account}: history ${historyId} has expired; resyncing the whole mailbox (only what differs changes)`,
      );
      const profile = await this.google.call(account, (g) => g.users.getProfile({ userId: 'me' }));
      await this.progress(account, 'full', profile.historyId!, '', 0);
      await this.fullSync(account, profile.historyId!, '');
      return;
    }
    const labels = await this.labels(account);
    for (const id of deleted) {
      added.delete(id);
      touched.delete(id);
    }
    const { synced, items } = await this.syncMessages(account, [...new Set([...added, ...touched])], labels.names);
    // New mail meets the rules before the history id moves on: after a crash the same additions
    // are read again, and a rule that already acted on a message does not act again.
    await this.rules.applyToNew(
      account,
      [...added].flatMap((id) => items.get(id) ?? []),
    );
    if (deleted.size > 0) await this.deleteMirrors(account, [...deleted]);
    if (latest !== historyId || synced > 0) await this.progress(account, 'incremental', latest, null, synced);
  }

  /**
   * Gmail messages by id into the memex: unknown ones fetched raw and ingested (source
   * gmail:<account>; mail an import already holds comes back as that item, same id), known
   * ones read for their labels; each whose state differs from the mirror is logged. Answers how
   * many were logged, and the item of each Gmail message.
   */
  private async syncMessages(
    account: string,
    ids: string[],
    names: ReadonlyMap<string, string>,
  ): Promise<{ synced: number; items: Map<string, string> }> {
    if (ids.length === 0) return { synced: 0, items: new Map() };
    const known = new Map(
      (
        await this.db
          .selectFrom('gmail_messages')
          .selectAll()
          .where('account', '=', account)
          .where('gmail_id', 'in', ids)
          .execute()
      ).map((m) => [m.gmail_id, m]),
    );
    const items = new Map([...known].map(([gmailId, mirror]) => [gmailId, mirror.item_id]));
    const drafts: Drafted[] = [];
    const fresh: Fetched[] = [];
    await mapLimit(ids, FETCH_CONCURRENCY, async (id) => {
      const mirror = known.get(id);
      try {
        if (!mirror) {
          const message = await this.google.call(account, (g) =>
            g.users.messages.get({ userId: 'me', id, format: 'raw' }),
          );
          fresh.push({
            id,
            threadId: message.threadId!,
            labelIds: message.labelIds ?? [],
            raw: message.raw!,
            historyId: message.historyId!,
          });
          return;
        }
        const message = await this.google.call(account, (g) =>
          g.users.messages.get({ userId: 'me', id, format: 'minimal' }),
        );
        const labels = labelNames(message.labelIds ?? [], names);
        if (!sameLabels(labels, mirror.labels))
          drafts.push(
            this.synced(account, mirror.item_id, {
              id,
              threadId: mirror.thread_id,
              labelIds: labels,
              historyId: message.historyId!,
            }),
          );
      } catch (error) {
        // Deleted between the listing and the read: its deletion is in the history.
        if (httpStatus(error) !== 404) throw error;
      }
    });
    // Newest first, as listed, so the last years are searchable first.
    const order = new Map(ids.map((id, i) => [id, i]));
    fresh.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
    for (const batch of byBytes(fresh, (m) => m.raw.length)) {
      const results = await ingestMessages(
        this.bus,
        this.config.rpcTimeoutMs * 4,
        connectorActor(account),
        { kind: 'gmail', id: account },
        batch.map((m) => ({ raw: Buffer.from(m.raw, 'base64url'), externalId: m.id })),
      );
      results.forEach((result, i) => {
        const message = batch[i]!;
        if (!result.id) {
          this.logger.warn(`${account}: Gmail message ${message.id} was not taken: ${result.reason ?? result.status}`);
          return;
        }
        items.set(message.id, result.id);
        drafts.push(this.synced(account, result.id, { ...message, labelIds: labelNames(message.labelIds, names) }));
      });
    }
    if (drafts.length > 0) await this.publisher.publishAll(drafts);
    return { synced: drafts.length, items };
  }

  private synced(account: string, itemId: string, message: Omit<Fetched, 'raw'>): Drafted {
    return draftOf(GmailMessageSynced, {
      subject: `item:${itemId}`,
      actor: connectorActor(account),
      kind: 'email',
      data: {
        id: itemId,
        account,
        gmail_id: message.id,
        thread_id: message.threadId,
        labels: message.labelIds,
        history_id: message.historyId,
      },
    });
  }

  /** Deleted in Gmail for good: deleted here too. */
  private async deleteMirrors(account: string, gmailIds: string[]): Promise<void> {
    const mirrors = await this.db
      .selectFrom('gmail_messages')
      .select('item_id')
      .where('account', '=', account)
      .where('gmail_id', 'in', gmailIds)
      .execute();
    await deleteItems(
      this.bus,
      this.config.rpcTimeoutMs,
      connectorActor(account),
      mirrors.map((m) => m.item_id),
    );
  }

  /** After a full resync: mirrors of messages Gmail no longer lists were deleted there. */
  private async dropVanished(account: string, startHistoryId: string): Promise<void> {
    const present = new Set<string>();
    let token: string | undefined;
    do {
      const page = await this.google.call(account, (g) =>
        g.users.messages.list({
          userId: 'me',
          maxResults: 500,
          includeSpamTrash: true,
          ...(token ? { pageToken: token } : {}),
        }),
      );
      for (const m of page.messages ?? []) present.add(m.id!);
      token = page.nextPageToken ?? undefined;
    } while (token);
    await this.caughtUp();
    const mirrored = await this.db
      .selectFrom('gmail_messages')
      .select(['gmail_id', 'history_id'])
      .where('account', '=', account)
      .execute();
    // A message added after the resync began is not in an older listing: only older mirrors count.
    const gone = mirrored
      .filter((m) => !present.has(m.gmail_id) && BigInt(m.history_id) <= BigInt(startHistoryId))
      .map((m) => m.gmail_id);
    if (gone.length > 0) await this.deleteMirrors(account, gone);
  }

  private async progress(
    account: string,
    phase: 'full' | 'incremental',
    historyId: string,
    pageToken: string | null,
    messages: number,
  ): Promise<void> {
    await this.publisher.publish(GmailSyncProgressed, {
      subject: `account:${account}`,
      actor: connectorActor(account),
      data: { account, phase, history_id: historyId, page_token: pageToken, messages },
    });
  }

  /** The account's user labels, both ways; a label the memex names that Gmail lacks is created. */
  private async labels(
    account: string,
  ): Promise<{ names: Map<string, string>; idOf: (name: string) => Promise<string> }> {
    const listed = await this.google.call(account, (g) => g.users.labels.list({ userId: 'me' }));
    const names = new Map((listed.labels ?? []).map((l) => [l.id!, l.name!]));
    const ids = new Map([...names].map(([id, name]) => [name, id]));
    return {
      names,
      idOf: async (name) => {
        if (SYSTEM_LABELS.has(name) || name.startsWith('CATEGORY_')) return name;
        const id = ids.get(name);
        if (id) return id;
        const created = await this.google.call(account, (g) =>
          g.users.labels.create({ userId: 'me', requestBody: { name } }),
        );
        ids.set(name, created.id!);
        names.set(created.id!, name);
        return created.id!;
      },
    };
  }
}
