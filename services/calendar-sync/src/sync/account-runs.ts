import type { Kysely } from 'kysely';
import type { ServiceHost } from '@memex/runtime';
import type { CalendarDatabase } from '../projection/schema.js';

/**
 * One sync of every connected account that granted `scope` (or of one account), one run at a
 * time: a second caller waits for the run in progress, then runs its own. The sync reads its own
 * state (accounts, tokens, etags) from the read model, so the projector catches up first. One
 * account's failure never stops the others': it is kept (why, since when) until that account's
 * next sync succeeds, and the run then fails naming every account that failed.
 */
export class AccountRuns<R> {
  private running: Promise<unknown> | null = null;
  /** Accounts whose last sync failed, with why and since when. */
  readonly failures = new Map<string, { reason: string; since: Date }>();

  constructor(
    private readonly db: Kysely<CalendarDatabase>,
    private readonly host: ServiceHost,
    private readonly scope: string,
    private readonly syncAccount: (account: string) => Promise<R>,
  ) {}

  async run(only?: string): Promise<R[]> {
    while (this.running) await this.running.catch(() => undefined);
    const run = (async () => {
      await this.host.projector?.caughtUp(120_000);
      const accounts = await this.db.selectFrom('google_accounts').select(['account', 'scopes']).execute();
      const reports: R[] = [];
      const failed: string[] = [];
      for (const { account, scopes } of accounts) {
        if ((only && account !== only) || !scopes.includes(this.scope)) continue;
        try {
          reports.push(await this.syncAccount(account));
          this.failures.delete(account);
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          this.failures.set(account, { reason, since: this.failures.get(account)?.since ?? new Date() });
          failed.push(`${account}: ${reason}`);
        }
      }
      // An account gone since (removed) is no failure any more.
      for (const account of this.failures.keys())
        if (!accounts.some((row) => row.account === account)) this.failures.delete(account);
      if (failed.length > 0) throw new Error(failed.join('; '));
      return reports;
    })();
    this.running = run;
    try {
      return await run;
    } finally {
      this.running = null;
    }
  }
}
