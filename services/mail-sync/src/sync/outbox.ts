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
import { GrantRevokedError } from '@memex/google';
import { BUS, CONFIG, DATABASE, ServiceHost, type HealthProblems } from '@memex/runtime';
import type { MailSyncDatabase, OutgoingTable } from '../projection/schema.js';
import { imapActor } from '../imap/imap-accounts.js';
import { connectorActor } from './google-accounts.js';
import { ImapTransport } from '../imap/imap-transport.js';
import { GmailTransport } from './gmail-transport.js';
import { RefusedForGood, type MailTransport, type SentMail } from './transports.js';

/** A mail due, with its account's provider. */
type Due = OutgoingTable & { provider: 'google' | 'imap' };

const actorOf = (mail: Due) => (mail.provider === 'imap' ? imapActor(mail.account) : connectorActor(mail.account));

/** How often due mail is looked for when nothing wakes the outbox earlier. */
const IDLE_CHECK_MS = 1000;

/**
 * Sends due mail exactly once, through the account's provider (Gmail, or SMTP for an IMAP
 * account). Before each send an `outgoing.attempted` is logged; a mail with an earlier attempt is
 * first looked for at the provider by its own Message-ID, so a crash after the provider took it
 * but before `outgoing.sent` was logged finds it there instead of sending it again, and a crash
 * before the call sends it. Drafts are kept in the provider's drafts. Runs on the replica that
 * leads the projection.
 */
@Injectable()
export class Outbox implements OnApplicationBootstrap, OnApplicationShutdown, HealthProblems {
  private readonly logger = new Logger('memex:mail-sync');
  private loop: Promise<void> | undefined;
  private stopped = false;
  private wakeUp: (() => void) | undefined;
  /** When a mail whose last try failed may be tried again (doubling, up to 10 minutes). */
  private readonly nextTry = new Map<string, number>();
  /** Mail whose last try failed (not for good: it is tried again), in health until it goes. */
  private readonly failing = new Map<string, { mail: Due; reason: string; since: Date; tries: number }>();
  /** Why the last look for due mail failed, if it did (the database, the log): nothing is sent meanwhile. */
  private stalled: string | undefined;

  constructor(
    @Inject(DATABASE) private readonly db: Kysely<MailSyncDatabase>,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(CONFIG) private readonly config: MemexConfig,
    private readonly publisher: EventPublisher,
    private readonly blobs: BlobStore,
    private readonly host: ServiceHost,
    private readonly gmail: GmailTransport,
    private readonly imap: ImapTransport,
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
        this.stalled = undefined;
      } catch (error) {
        this.stalled = (error as Error).message;
        this.logger.error(`outbox: ${this.stalled}`);
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
      .select('a.provider')
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
    // A failing mail that is no longer due (cancelled, sent from a replica that led before) is no problem.
    const dueIds = new Set(due.map((mail) => mail.id));
    for (const id of this.failing.keys()) if (!dueIds.has(id)) this.failing.delete(id);
    for (const mail of due) {
      if ((this.nextTry.get(mail.id) ?? 0) > Date.now()) continue;
      try {
        const transport = this.transport(mail.provider);
        if (mail.state === 'draft') await this.saveDraft(mail, transport);
        else if (mail.state === 'deleted') await this.removeDraft(mail, transport);
        else await this.send(mail, transport);
        this.failing.delete(mail.id);
      } catch (error) {
        if (error instanceof GrantRevokedError) continue; // the sync marks the account; the mail waits for a new grant
        const waitMs = Math.min(1000 * 2 ** Math.min(mail.attempts, 10), 600_000);
        const reason = (error as Error).message;
        this.nextTry.set(mail.id, Date.now() + waitMs);
        const failing = this.failing.get(mail.id);
        this.failing.set(mail.id, {
          mail,
          reason,
          since: failing?.since ?? new Date(),
          tries: (failing?.tries ?? 0) + 1,
        });
        this.logger.error(`outgoing ${mail.id}: ${reason} (tried again in ${waitMs / 1000} s)`);
      }
    }
  }

  /** Mail that does not go out (the provider down, SMTP refusing for now) shows in /healthz and `memex status`, with why. */
  async healthProblems(): Promise<string[]> {
    const problems = this.stalled ? [`the outbox cannot look for due mail, nothing is sent: ${this.stalled}`] : [];
    for (const [id, { mail, reason, since, tries }] of this.failing) {
      const what =
        mail.state === 'draft'
          ? `draft ${id} not saved to ${mail.account}`
          : mail.state === 'deleted'
            ? `draft ${id} not removed from ${mail.account}`
            : `mail ${id} "${mail.subject}" to ${mail.to.join(', ')} not sent from ${mail.account}`;
      const next = new Date(this.nextTry.get(id) ?? Date.now()).toISOString();
      problems.push(
        `${what}: ${reason} (${tries} ${tries === 1 ? 'try' : 'tries'} since ${since.toISOString()}; next at ${next})`,
      );
    }
    return problems;
  }

  private transport(provider: 'google' | 'imap'): MailTransport {
    return provider === 'imap' ? this.imap : this.gmail;
  }

  private async send(mail: Due, transport: MailTransport): Promise<void> {
    if (mail.attempts > 0) {
      const found = await transport.findSent(mail, await this.blobs.get(mail.mime_sha256));
      if (found === 'not_yet') {
        this.nextTry.set(mail.id, Date.now() + IDLE_CHECK_MS);
        return;
      }
      if (found !== 'not_sent') {
        await this.sent(mail, found, true);
        return;
      }
    }
    await this.publisher.publish(OutgoingAttempted, {
      subject: `outgoing:${mail.id}`,
      actor: actorOf(mail),
      data: { id: mail.id, attempt: mail.attempts + 1 },
    });
    let sent: SentMail;
    try {
      sent = await transport.send(mail, await this.blobs.get(mail.mime_sha256));
    } catch (error) {
      if (!(error instanceof RefusedForGood)) throw error;
      await this.publisher.publish(OutgoingFailed, {
        subject: `outgoing:${mail.id}`,
        actor: actorOf(mail),
        data: { id: mail.id, reason: error.message },
      });
      return;
    }
    await this.sent(mail, sent, false);
  }

  private async sent(mail: Due, sent: SentMail, found: boolean): Promise<void> {
    await this.publisher.publish(OutgoingSent, {
      subject: `outgoing:${mail.id}`,
      actor: actorOf(mail),
      data: { id: mail.id, gmail_id: sent.id, thread_id: sent.threadId, found_after_crash: found },
    });
  }

  private async saveDraft(mail: Due, transport: MailTransport): Promise<void> {
    const draftId = await transport.saveDraft(mail, await this.blobs.get(mail.mime_sha256));
    await this.publisher.publish(OutgoingDraftSaved, {
      subject: `outgoing:${mail.id}`,
      actor: actorOf(mail),
      data: { id: mail.id, gmail_draft_id: draftId, mime_sha256: mail.mime_sha256 },
    });
  }

  /** A draft deleted in the memex leaves the provider's drafts. */
  private async removeDraft(mail: Due, transport: MailTransport): Promise<void> {
    await transport.removeDraft(mail);
    await this.publisher.publish(OutgoingDraftRemoved, {
      subject: `outgoing:${mail.id}`,
      actor: actorOf(mail),
      data: { id: mail.id },
    });
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.wakeUp?.();
    await this.loop;
  }
}
