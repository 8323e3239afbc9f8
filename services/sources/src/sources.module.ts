import { Module, type DynamicModule } from '@nestjs/common';
import type { MemexConfig } from '@memex/config';
import { MemexModule } from '@memex/runtime';
import { SourcesCommands } from './commands/sources.commands.js';
import { SourcesProjector } from './projection/sources.projector.js';
import { SourcesQueries } from './queries/sources.queries.js';
import { ExportSync } from './watch/export-sync.js';
import { FolderSync } from './watch/folder-sync.js';
import { ArchiveSync } from './watch/archive-sync.js';
import { MailboxSync } from './watch/mailbox-sync.js';
import { Watchers } from './watch/watchers.js';
import { PipelineBacklog } from './watch/pipeline-backlog.js';
import { WorkerWatch } from './watch/worker-watch.js';

/** Sources (issue 20): watched folders read into items, their state as events, and the list of every source. */
@Module({})
export class SourcesModule {
  static register(config: MemexConfig): DynamicModule {
    return {
      module: SourcesModule,
      imports: [MemexModule.forService({ service: 'sources', config, schema: 'sources' })],
      providers: [
        SourcesProjector,
        FolderSync,
        MailboxSync,
        ArchiveSync,
        ExportSync,
        Watchers,
        WorkerWatch,
        PipelineBacklog,
        SourcesCommands,
        SourcesQueries,
      ],
    };
  }
}
