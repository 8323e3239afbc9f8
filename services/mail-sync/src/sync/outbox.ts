import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Kysely } from 'kysely';
import {
  OutgoingAttempted,
  OutgoingDraftRemoved,
  OutgoingDraftSaved,
  OutgoingFailed,
  OutgoingSent,
} from '@memex/contracts';
import { BlobStore } from '@memex/blobs';
import { EventPublisher, type Bus } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { GrantRevokedError, httpStatus, isRetryable, type gmail_v1 } from '@memex/google';
import { BUS, CONFIG, DATABASE, ServiceHost } from '@memex/runtime';
import type { MailSyncDatabase, OutgoingTable } from '../projection/schema.js';
import { connectorActor } from './gmail-sync.js';
import { GoogleAccounts } from './google-accounts.js';

/** How often due mail is looked for when nothing wakes the outbox earlier. */
const IDLE_CHECK_MS = 1000;

/**
 * Sends due mail exactly once. Before each messages.send an `outgoing.attempted` is logged;
 * a mail with an earlier attempt is first looked up in Gmail by its own Message-ID
 * (`rfc822msgid:`), so a crash after Gmail took it but before `outgoing.sent` was logged finds it
 * there instead of sending it again, and a crash before the call sends it. Drafts are saved to
 * Gmail drafts. Runs on the replica that leads the projection.
 */
@Injectable()
export class Outbox implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('memex:mail-sync');
  private loop: Promise<void> | undefined;
  private stopped = false;
  private wakeUp: (() => void) | undefined;
  /** When a mail whose last try failed may be tried again (doubling, up to 10 minutes). */
  private readonly nextTry = new Map<string, number>();

  constructor(
    @Inject(DATABASE) private readonly db: Kysely<MailSyncDatabase>,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(CONFIG) private readonly config: MemexConfig,
    private readonly publisher: EventPublisher,
    private readonly blobs: BlobStore,
    private readonly host: ServiceHost,
    private readonly google: GoogleAccounts,
  ) {}

  onApplicationBootstrap(): void {
    this.loop = this.run();
  }

  /** A mail is due at `at` (null: a draft to save now): look then rather than at the next idle check. */
  wake(at: Date | null): void {
    setTimeout(() => this.wakeUp?.(), Math.max(0, (at?.getTime() ?? 0) - Date.now())).unref();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.sendDue();
      } catch (error) {
        this.logger.error(`outbox: ${(error as Error).message}`);
      }
      await new Promise<void>((resolve) => {
        this.wakeUp = resolve;
        setTimeout(resolve, IDLE_CHECK_MS).unref();
      });
    }
  }

  async caughtUp(): Promise<void> {
    await this.host.projector!.waitFor(await this.bus.lastSeq(), this.config.minSeqTimeoutMs * 6);
  }

  private async sendDue(): Promise<void> {
    if (this.stopped || !this.host.projector?.isLeader) return;
    await this.caughtUp();
    const due = await this.db
      .selectFrom('outgoing as o')
      .innerJoin('accounts as a', 'a.account', 'o.account')
      .selectAll('o')
      .where('a.status', '=', 'active')
      .where((eb) =>
        eb.or([
          eb.and([eb('o.state', 'in', ['scheduled', 'sending']), eb('o.send_at', '<=', new Date())]),
          // A draft Gmail lacks or holds in an older version; a deleted one Gmail still holds.
          eb.and([
            eb('o.state', '=', 'draft'),
            eb.or([
              eb('o.gmail_draft_id', 'is', null),
              eb('o.gmail_draft_sha256', 'is distinct from', eb.ref('o.mime_sha256')),
            ]),
          ]),
          eb.and([eb('o.state', '=', 'deleted'), eb('o.gmail_draft_id', 'is not', null)]),
        ]),
      )
      .orderBy('o.send_at')
      .execute();
    for (const mail of due) {
      if ((this.nextTry.get(mail.id) ?? 0) > Date.now()) continue;
      try {
        if (mail.state === 'draft') await this.saveDraft(mail);
        else if (mail.state === 'deleted') await this.removeDraft(mail);
        else await this.send(mail);
      } catch (error) {
        if (error instanceof GrantRevokedError) continue; // the sync marks the account; the mail waits for a new grant
        const waitMs = Math.min(1000 * 2 ** Math.min(mail.attempts, 10), 600_000);
        this.nextTry.set(mail.id, Date.now() + waitMs);
        this.logger.error(`outgoing ${mail.id}: ${(error as Error).message} (tried again in ${waitMs / 1000} s)`);
      }
    }
  }

  private async send(mail: OutgoingTable): Promise<void> {
    if (mail.attempts > 0) {
      const found = await this.google.call(mail.account, (g) =>
        g.users.messages.list({ userId: 'me', q: `rfc822msgid:${mail.message_id}`, includeSpamTrash: true }),
      );
      const sent = found.messages?.[0];
      if (sent) {
        await this.sent(mail, sent.id!, sent.threadId!, true);
        return;
      }
    }
    await this.publisher.publish(OutgoingAttempted, {
      subject: `outgoing:${mail.id}`,
      actor: connectorActor(mail.account),
      data: { id: mail.id, attempt: mail.attempts + 1 },
    });
    const raw = (await this.blobs.get(mail.mime_sha256)).toString('base64url');
    let answer: gmail_v1.Schema$Message;
    try {
      // Not retried inside: a retry goes through the lookup above (Gmail may have taken it).
      answer = await this.google.call(
        mail.account,
        (g) =>
          g.users.messages.send({
            userId: 'me',
            requestBody: { raw, ...(mail.thread_id ? { threadId: mail.thread_id } : {}) },
          }),
        { units: 100, once: true },
      );
    } catch (error) {
      const status = httpStatus(error);
      // Refused for good (a bad address, too large): trying again would be refused again.
      if (status === undefined || status < 400 || status >= 500 || status === 401 || isRetryable(error)) throw error;
      await this.publisher.publish(OutgoingFailed, {
        subject: `outgoing:${mail.id}`,
        actor: connectorActor(mail.account),
        data: { id: mail.id, reason: `Gmail refused it (${status}): ${(error as Error).message}` },
      });
      return;
    }
    await this.sent(mail, answer.id!, answer.threadId!, false);
  }

  private async sent(mail: OutgoingTable, gmailId: string, threadId: string, found: boolean): Promise<void> {
    await this.publisher.publish(OutgoingSent, {
      subject: `outgoing:${mail.id}`,
      actor: connectorActor(mail.account),
      data: { id: mail.id, gmail_id: gmailId, thread_id: threadId, found_after_crash: found },
    });
  }

  /** Creates the Gmail draft, or writes an edited version over it (a draft deleted in Gmail meanwhile is created again). */
  private async saveDraft(mail: OutgoingTable): Promise<void> {
    const raw = (await this.blobs.get(mail.mime_sha256)).toString('base64url');
    const requestBody = { message: { raw, ...(mail.thread_id ? { threadId: mail.thread_id } : {}) } };
    const create = () => this.google.call(mail.account, (g) => g.users.drafts.create({ userId: 'me', requestBody }));
    const draft = mail.gmail_draft_id
      ? await this.google
          .call(mail.account, (g) => g.users.drafts.update({ userId: 'me', id: mail.gmail_draft_id!, requestBody }))
          .catch((error: unknown) => {
            if (httpStatus(error) !== 404) throw error;
            return create();
          })
      : await create();
    await this.publisher.publish(OutgoingDraftSaved, {
      subject: `outgoing:${mail.id}`,
      actor: connectorActor(mail.account),
      data: { id: mail.id, gmail_draft_id: draft.id!, mime_sha256: mail.mime_sha256 },
    });
  }

  /** A draft deleted in the memex leaves Gmail's drafts (already gone there is as good). */
  private async removeDraft(mail: OutgoingTable): Promise<void> {
    await this.google
      .call(mail.account, (g) => g.users.drafts.delete({ userId: 'me', id: mail.gmail_draft_id! }))
      .catch((error: unknown) => {
        if (httpStatus(error) !== 404) throw error;
      });
    await this.publisher.publish(OutgoingDraftRemoved, {
      subject: `outgoing:${mail.id}`,
      actor: connectorActor(mail.account),
      data: { id: mail.id },
    });
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.wakeUp?.();
    await this.loop;
  }
}
