import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Kysely } from 'kysely';
import type { FetchMessageObject, ImapFlow, ListResponse } from 'imapflow';
import { AccountNeedsReauth, ImapFolderSynced, ImapMessageSynced } from '@memex/contracts';
import { draftOf, EventPublisher, type Bus, type Drafted } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { BUS, CONFIG, DATABASE, ServiceHost } from '@memex/runtime';
import { imapChange, isInbox, labelsOf, type FolderInfo } from '../domain/imap-flags.js';
import { deltaOf, sameLabels } from '../domain/labels.js';
import type { ImapMessagesTable, MailSyncDatabase } from '../projection/schema.js';
import { byBytes, deleteItems, ingestMessages } from '../sync/connector.js';
import { RuleEngine } from '../sync/rule-engine.js';
import { ImapAccounts, imapActor, ImapLoginRefused } from './imap-accounts.js';

/** Messages fetched with their bodies at once. */
const FETCH_BATCH = 200;

/** What one cycle learnt across folders: deletions wait until every folder was read (a move is not a deletion). */
interface CycleSeen {
  items: Set<string>;
  missing: Set<string>;
}

/**
 * One IMAP account's two-way sync, a cycle at a time over one session: the memex's flag changes
 * go to the server first, then every selectable folder is read from where it stopped — new UIDs
 * (from UIDNEXT) fetched and ingested, flags read (only those changed since HIGHESTMODSEQ where
 * CONDSTORE is offered), expunged UIDs noticed. A UIDVALIDITY change reads the folder again: the
 * memex matches each message by its content, so nothing is duplicated. Every step is logged, so a
 * restart resumes from the log.
 */
@Injectable()
export class ImapSync {
  private readonly logger = new Logger('memex:mail-sync');

  constructor(
    @Inject(DATABASE) private readonly db: Kysely<MailSyncDatabase>,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(CONFIG) private readonly config: MemexConfig,
    private readonly publisher: EventPublisher,
    private readonly host: ServiceHost,
    private readonly accounts: ImapAccounts,
    private readonly rules: RuleEngine,
  ) {}

  async cycle(account: string): Promise<void> {
    await this.caughtUp();
    let client: ImapFlow;
    try {
      client = await this.accounts.session(account);
    } catch (error) {
      if (!(error instanceof ImapLoginRefused)) throw error;
      this.logger.warn(error.message);
      await this.publisher.publish(AccountNeedsReauth, {
        subject: `account:${account}`,
        actor: imapActor(account),
        data: { account, reason: error.message },
      });
      return;
    }
    try {
      const folders = (await client.list()).filter((f) => !f.flags.has('\\Noselect') && !f.flags.has('\\NonExistent'));
      if (await this.push(client, account, folders)) await this.caughtUp();
      const seen: CycleSeen = { items: new Set(), missing: new Set() };
      for (const folder of folders) await this.syncFolder(client, account, folder, seen);
      const gone = [...seen.missing].filter((id) => !seen.items.has(id));
      if (gone.length > 0) await deleteItems(this.bus, this.config.rpcTimeoutMs, imapActor(account), gone);
    } finally {
      await client.logout().catch(() => client.close());
    }
  }

  private async caughtUp(): Promise<void> {
    await this.host.projector!.waitFor(await this.bus.lastSeq(), this.config.minSeqTimeoutMs * 6);
  }

  /** Memex changes to mirrored messages, written to the server: flags set, moves made; each logged as the state it produced. */
  private async push(client: ImapFlow, account: string, folders: ListResponse[]): Promise<boolean> {
    const pushes = await this.db
      .selectFrom('pushes')
      .selectAll()
      .where('account', '=', account)
      .orderBy('seq')
      .execute();
    if (pushes.length === 0) return false;
    const mirrors = await this.db
      .selectFrom('imap_messages')
      .selectAll()
      .where('item_id', 'in', [...new Set(pushes.map((p) => p.item_id))])
      .execute();
    const special = (use: string) => folders.find((f) => (use === 'INBOX' ? isInbox(f) : f.specialUse === use));
    for (const mirror of mirrors) {
      const mine = pushes.filter((p) => p.item_id === mirror.item_id);
      const change = imapChange(deltaOf(mine.map((p) => p.change)));
      if (change.unsupported.length > 0)
        this.logger.warn(
          `${account}: IMAP has no labels, not written: ${change.unsupported.join(', ')} (${mirror.item_id})`,
        );
      let folder = folders.find((f) => f.path === mirror.folder) ?? { path: mirror.folder };
      let uid = mirror.uid;
      let flags = mirror.flags;
      const lock = await client.getMailboxLock(mirror.folder);
      try {
        // Under another UIDVALIDITY the UID names nothing: the next read of the folder finds the message.
        const box = client.mailbox;
        if (box && String(box.uidValidity) === mirror.uidvalidity) {
          if (change.add.length) await client.messageFlagsAdd(String(uid), change.add, { uid: true });
          if (change.remove.length) await client.messageFlagsRemove(String(uid), change.remove, { uid: true });
          const target = change.moveTo ? special(change.moveTo) : undefined;
          if (change.moveTo && !target)
            this.logger.warn(`${account}: no ${change.moveTo} folder to move ${mirror.item_id} to`);
          if (target && target.path !== mirror.folder) {
            const moved = await client.messageMove(String(uid), target.path, { uid: true });
            const newUid = moved ? moved.uidMap?.get(uid) : undefined;
            if (newUid) {
              folder = target;
              uid = newUid;
            }
          }
          if (folder.path === mirror.folder) {
            const current = await client.fetchOne(String(uid), { uid: true, flags: true }, { uid: true });
            if (current) flags = [...(current.flags ?? [])];
          } else {
            flags = [...new Set([...flags.filter((f) => !change.remove.includes(f)), ...change.add])];
          }
        }
      } finally {
        lock.release();
      }
      // The message left the folder meanwhile (the next read finds it): the change has nowhere to go.
      const uidvalidity =
        folder.path === mirror.folder ? mirror.uidvalidity : await this.uidvalidityOf(client, folder.path);
      await this.publisher.publishAll(
        mine.map((push) => this.synced(account, mirror.item_id, { folder, uidvalidity, uid, flags }, push.event_id)),
      );
    }
    return true;
  }

  private async uidvalidityOf(client: ImapFlow, path: string): Promise<string> {
    const status = await client.status(path, { uidValidity: true });
    return String(status ? status.uidValidity : 0);
  }

  private async syncFolder(client: ImapFlow, account: string, folder: ListResponse, seen: CycleSeen): Promise<void> {
    const lock = await client.getMailboxLock(folder.path);
    try {
      const box = client.mailbox;
      if (!box) return;
      const uidvalidity = String(box.uidValidity);
      const state = await this.db
        .selectFrom('imap_folders')
        .selectAll()
        .where('account', '=', account)
        .where('folder', '=', folder.path)
        .executeTakeFirst();
      const mirrors = await this.db
        .selectFrom('imap_messages')
        .selectAll()
        .where('account', '=', account)
        .where('folder', '=', folder.path)
        .execute();
      // First read, or every UID changed meaning: all of it again.
      const reset = !state || state.uidvalidity !== uidvalidity;
      if (state && reset) this.logger.warn(`${account}: ${folder.path} has a new UIDVALIDITY; reading it again`);
      const known = new Map(mirrors.filter((m) => m.uidvalidity === uidvalidity).map((m) => [m.uid, m]));
      const from = reset ? 1 : state.uidnext;
      const fresh: number[] = [];
      if (box.exists > 0) {
        for await (const m of client.fetch(`${from}:*`, { uid: true }, { uid: true }))
          if (m.uid >= from && !known.has(m.uid)) fresh.push(m.uid);
      }
      const added = await this.fetchNew(client, account, folder, uidvalidity, fresh);
      for (const id of added.values()) seen.items.add(id);

      if (!reset && box.exists > 0)
        await this.readFlags(client, account, folder, known, state.highestmodseq, box.highestModseq);
      // Expunged: mirrors of this folder the server no longer lists (under an old UIDVALIDITY: not read again).
      const present = new Set(box.exists > 0 ? (await client.search({ all: true }, { uid: true })) || [] : []);
      const readAgain = new Set(added.values());
      for (const mirror of mirrors) {
        const gone = mirror.uidvalidity === uidvalidity ? !present.has(mirror.uid) : !readAgain.has(mirror.item_id);
        if (gone) seen.missing.add(mirror.item_id);
      }
      // Rules act on mail that arrived since the last read (not on a first or repeated read).
      if (!reset) await this.rules.applyToNew(account, [...added.values()]);
      await this.publisher.publish(ImapFolderSynced, {
        subject: `account:${account}`,
        actor: imapActor(account),
        data: {
          account,
          folder: folder.path,
          uidvalidity,
          uidnext: box.uidNext,
          highestmodseq: box.highestModseq !== undefined ? String(box.highestModseq) : null,
        },
      });
    } finally {
      lock.release();
    }
  }

  /** New UIDs fetched whole, ingested (newest first) and logged with their flags; the item of each UID. */
  private async fetchNew(
    client: ImapFlow,
    account: string,
    folder: ListResponse,
    uidvalidity: string,
    uids: number[],
  ): Promise<Map<number, string>> {
    const items = new Map<number, string>();
    const newestFirst = [...uids].sort((a, b) => b - a);
    for (let i = 0; i < newestFirst.length; i += FETCH_BATCH) {
      const range = newestFirst.slice(i, i + FETCH_BATCH);
      const fetched: FetchMessageObject[] = [];
      for await (const m of client.fetch(
        range.join(','),
        { uid: true, flags: true, envelope: true, source: true },
        { uid: true },
      ))
        if (m.source) fetched.push(m);
      fetched.sort((a, b) => b.uid - a.uid);
      if (isInbox(folder)) await this.dropReceipts(client, account, fetched);
      for (const batch of byBytes(fetched, (m) => m.source!.length)) {
        const results = await ingestMessages(
          this.bus,
          this.config.rpcTimeoutMs * 4,
          imapActor(account),
          { kind: 'imap', id: account },
          batch.map((m) => ({ raw: m.source!, externalId: `${folder.path}/${uidvalidity}/${m.uid}` })),
        );
        const drafts: Drafted[] = [];
        results.forEach((result, n) => {
          const m = batch[n]!;
          if (!result.id) {
            this.logger.warn(
              `${account}: ${folder.path} UID ${m.uid} was not taken: ${result.reason ?? result.status}`,
            );
            return;
          }
          items.set(m.uid, result.id);
          drafts.push(
            this.synced(account, result.id, { folder, uidvalidity, uid: m.uid, flags: [...(m.flags ?? [])] }),
          );
        });
        if (drafts.length > 0) await this.publisher.publishAll(drafts);
      }
    }
    return items;
  }

  /**
   * The copies of mail sent from here that the account received (ImapTransport's receipts) are
   * not new mail: removed from `fetched`, and deleted on the server once their mail is logged as
   * sent (the Sent folder holds the sent copy); one whose send is not logged yet is left there for
   * the outbox, which looks for it after a crash and deletes it when it confirms the send.
   */
  private async dropReceipts(client: ImapFlow, account: string, fetched: FetchMessageObject[]): Promise<void> {
    const ids = fetched.flatMap((m) => (m.envelope?.messageId ? [m.envelope.messageId] : []));
    if (ids.length === 0) return;
    const mine = new Map(
      (
        await this.db
          .selectFrom('outgoing')
          .select(['message_id', 'state'])
          .where('account', '=', account)
          .where('state', 'in', ['sending', 'sent'])
          .where('message_id', 'in', ids)
          .execute()
      ).map((row) => [row.message_id, row.state]),
    );
    const receipts = fetched.filter((m) => m.envelope?.messageId && mine.has(m.envelope.messageId));
    const sent = receipts.filter((m) => mine.get(m.envelope!.messageId!) === 'sent');
    if (sent.length > 0) await client.messageDelete(sent.map((m) => m.uid).join(','), { uid: true });
    fetched.splice(0, fetched.length, ...fetched.filter((m) => !receipts.includes(m)));
  }

  /** Flags of known messages: those changed since the last HIGHESTMODSEQ (CONDSTORE), or all; logged where they differ. */
  private async readFlags(
    client: ImapFlow,
    account: string,
    folder: ListResponse,
    known: Map<number, ImapMessagesTable>,
    lastModseq: string | null,
    modseq: bigint | undefined,
  ): Promise<void> {
    if (modseq !== undefined && lastModseq !== null && BigInt(lastModseq) >= modseq) return;
    const options =
      modseq !== undefined && lastModseq !== null ? { uid: true, changedSince: BigInt(lastModseq) } : { uid: true };
    const drafts: Drafted[] = [];
    for await (const m of client.fetch('1:*', { uid: true, flags: true }, options)) {
      const mirror = known.get(m.uid);
      if (!mirror) continue;
      const flags = [...(m.flags ?? [])];
      if (!sameLabels(labelsOf(folder, flags), mirror.labels))
        drafts.push(
          this.synced(account, mirror.item_id, { folder, uidvalidity: mirror.uidvalidity, uid: m.uid, flags }),
        );
    }
    if (drafts.length > 0) await this.publisher.publishAll(drafts);
  }

  private synced(
    account: string,
    itemId: string,
    at: { folder: FolderInfo; uidvalidity: string; uid: number; flags: string[] },
    pushed?: string,
  ): Drafted {
    return draftOf(ImapMessageSynced, {
      subject: `item:${itemId}`,
      actor: imapActor(account),
      kind: 'email',
      data: {
        id: itemId,
        account,
        folder: at.folder.path,
        uidvalidity: at.uidvalidity,
        uid: at.uid,
        flags: [...at.flags].sort(),
        labels: labelsOf(at.folder, at.flags),
        ...(pushed ? { pushed } : {}),
      },
    });
  }
}
