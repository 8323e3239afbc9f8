import { Module, type DynamicModule } from '@nestjs/common';
import type { MemexConfig } from '@memex/config';
import { MemexModule } from '@memex/runtime';
import { AccountsCommands } from './commands/accounts.commands.js';
import { OutgoingCommands } from './commands/outgoing.commands.js';
import { ProposalsCommands } from './commands/proposals.commands.js';
import { RulesCommands } from './commands/rules.commands.js';
import { MailSyncProjector } from './projection/mail-sync.projector.js';
import { AccountsQueries } from './queries/accounts.queries.js';
import { OutgoingQueries } from './queries/outgoing.queries.js';
import { ProposalsQueries } from './queries/proposals.queries.js';
import { RulesQueries } from './queries/rules.queries.js';
import { ImapAccounts } from './imap/imap-accounts.js';
import { ImapSync } from './imap/imap-sync.js';
import { ImapTransport } from './imap/imap-transport.js';
import { GmailTransport } from './sync/gmail-transport.js';
import { GmailSync } from './sync/gmail-sync.js';
import { GoogleAccounts } from './sync/google-accounts.js';
import { Outbox } from './sync/outbox.js';
import { RuleEngine } from './sync/rule-engine.js';
import { SyncScheduler } from './sync/scheduler.js';

/** Google accounts and Gmail, and plain IMAP/SMTP accounts, two-way (seed §6.1–6.3): accounts, first and incremental sync, changes written back, mail written and sent exactly once. */
@Module({})
export class MailSyncModule {
  static register(config: MemexConfig): DynamicModule {
    return {
      module: MailSyncModule,
      imports: [MemexModule.forService({ service: 'mail-sync', config, schema: 'mail_sync' })],
      providers: [
        MailSyncProjector,
        GoogleAccounts,
        GmailSync,
        ImapAccounts,
        ImapSync,
        ImapTransport,
        GmailTransport,
        SyncScheduler,
        Outbox,
        AccountsCommands,
        AccountsQueries,
        OutgoingCommands,
        OutgoingQueries,
        RuleEngine,
        RulesCommands,
        RulesQueries,
        ProposalsCommands,
        ProposalsQueries,
      ],
    };
  }
}
