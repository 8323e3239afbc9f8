import { Module, type DynamicModule } from '@nestjs/common';
import type { MemexConfig } from '@memex/config';
import { MemexModule, MethodRouter } from '@memex/runtime';
import { HeadCommands } from './commands/head.commands.js';
import { MemoriesCommands } from './commands/memories.commands.js';
import { TriggersCommands } from './commands/triggers.commands.js';
import { HeadLinkService } from './link/head-link.service.js';
import { CommitmentWatch } from './link/commitment-watch.js';
import { TriggerEvaluator } from './link/trigger-evaluator.js';
import { TriggerFiring } from './link/trigger-firing.js';
import { SessionKnowledge } from './link/session-knowledge.js';
import { HeadProjector } from './projection/head.projector.js';
import { CredentialsQueries } from './queries/credentials.queries.js';
import { InboxQueries } from './queries/inbox.queries.js';
import { TriggersQueries } from './queries/triggers.queries.js';

/**
 * The head link (seed §2.1, §2.4, §3): enrollment, the outbound mTLS stream that answers the
 * head's calls within the scope it stamps, the five things the memex may ask of the head, event
 * triggers, and the agent's work (session digests, outputs, web pages, memories) as knowledge.
 */
@Module({})
export class HeadModule {
  static register(config: MemexConfig): DynamicModule {
    return {
      module: HeadModule,
      imports: [MemexModule.forService({ service: 'head', config, schema: 'head' })],
      providers: [
        MethodRouter,
        HeadLinkService,
        HeadCommands,
        MemoriesCommands,
        TriggersCommands,
        TriggersQueries,
        InboxQueries,
        CredentialsQueries,
        TriggerFiring,
        TriggerEvaluator,
        CommitmentWatch,
        SessionKnowledge,
        HeadProjector,
      ],
    };
  }
}
