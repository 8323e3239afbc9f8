import { Module, type DynamicModule } from '@nestjs/common';
import type { MemexConfig } from '@memex/config';
import type { Bus } from '@memex/bus';
import { Locations, memexLocations, workerScheme } from '@memex/locations';
import { BUS, MemexModule } from '@memex/runtime';
import { IngestService } from './commands/ingest.service.js';
import { ThreadJoins } from './commands/thread-joins.js';
import { DeletionService } from './commands/deletion.service.js';
import { ItemsProjector } from './projection/items.projector.js';
import { ItemsService } from './queries/items.service.js';
import { MailService } from './queries/mail.service.js';
import { NotesService } from './commands/notes.service.js';

/** The ingest service: the one way items get in, the items and mail read model, and deletion. */
@Module({})
export class IngestModule {
  static register(config: MemexConfig): DynamicModule {
    return {
      module: IngestModule,
      imports: [MemexModule.forService({ service: 'ingest', config, schema: 'ingest' })],
      providers: [
        {
          provide: Locations,
          useFactory: (bus: Bus) => memexLocations().register('worker', workerScheme(bus.nc)),
          inject: [BUS],
        },
        ItemsProjector,
        ItemsService,
        NotesService,
        IngestService,
        ThreadJoins,
        DeletionService,
        MailService,
      ],
    };
  }
}
