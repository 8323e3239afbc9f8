import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { DATABASE, ServiceHost, type HealthProblems } from '@memex/runtime';
import type { MailSyncDatabase } from '../projection/schema.js';
import { ImapSync } from '../imap/imap-sync.js';
import { GmailSync } from './gmail-sync.js';

/**
 * Runs the sync of every active account on an interval, on the replica that leads the
 * projection (so two replicas never sync one account at once). Cycles never overlap: a
 * `memex accounts sync` waits for the one running.
 */
@Injectable()
export class SyncScheduler implements OnApplicationBootstrap, OnApplicationShutdown, HealthProblems {
  private readonly logger = new Logger('memex:mail-sync');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = false;
  /** How often Gmail and the IMAP servers are polled (push notifications need a public endpoint; polling is the default). */
  private readonly pollMs = Number(process.env.MEMEX_GMAIL_POLL_MS || 60_000);
  /**
   * Accounts whose last cycle failed (not a revoked grant: that marks the account), with why and
   * since when; gone once a cycle succeeds. In health and `memex accounts list`: mail not coming in
   * is never only a log line.
   */
  readonly failures = new Map<string, { reason: string; since: Date }>();

  constructor(
    @Inject(DATABASE) private readonly db: Kysely<MailSyncDatabase>,
    private readonly host: ServiceHost,
    private readonly sync: GmailSync,
    private readonly imap: ImapSync,
  ) {}

  onApplicationBootstrap(): void {
    const tick = () => {
      if (this.stopped) return;
      void this.now()
        .catch((error) => this.logger.error(`sync failed: ${(error as Error).message}`))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.pollMs);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  /** One cycle of the named account, or of every active one; the accounts synced. */
  now(account?: string): Promise<string[]> {
    const next = this.running.then(async () => {
      if (!this.host.projector?.isLeader || this.stopped) return [];
      await this.sync.caughtUp();
      let query = this.db.selectFrom('accounts').select(['account', 'provider']).where('status', '=', 'active');
      if (account) query = query.where('account', '=', account);
      const rows = await query.orderBy('account').execute();
      const accounts = rows.map((row) => row.account);
      for (const { account: name, provider } of rows) {
        try {
          await (provider === 'imap' ? this.imap.cycle(name) : this.sync.cycle(name));
          this.failures.delete(name);
        } catch (error) {
          // One account's failure (Google down, a bug) never stops the others; the next cycle retries.
          this.failures.set(name, {
            reason: (error as Error).message,
            since: this.failures.get(name)?.since ?? new Date(),
          });
          this.logger.error(`${name}: ${(error as Error).message}`);
        }
      }
      return accounts;
    });
    this.running = next.catch(() => undefined);
    return next;
  }

  async healthProblems(): Promise<string[]> {
    return [...this.failures].map(
      ([account, { reason, since }]) =>
        `the mail sync of ${account} fails since ${since.toISOString()}: ${reason} (tried again every ${this.pollMs / 1000} s)`,
    );
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
