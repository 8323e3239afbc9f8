import type { Kysely } from 'kysely';
import type { ServiceHost } from '@memex/runtime';
import type { CalendarDatabase } from '../projection/schema.js';

/**
 * One sync of every connected account that granted `scope` (or of one account), one run at a
 * time: a second caller waits for the run in progress, then runs its own. The sync reads its own
 * state (accounts, tokens, etags) from the read model, so the projector catches up first.
 */
export class AccountRuns<R> {
  private running: Promise<unknown> | null = null;

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
      for (const { account, scopes } of accounts) {
        if ((only && account !== only) || !scopes.includes(this.scope)) continue;
        reports.push(await this.syncAccount(account));
      }
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
