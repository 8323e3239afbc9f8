import { Module, type DynamicModule } from '@nestjs/common';
import type { MemexConfig } from '@memex/config';
import { MemexModule } from '@memex/runtime';
import { ItemsProjector } from './items/items.projector.js';
import { ItemsService } from './items/items.service.js';
import { NotesService } from './notes/notes.service.js';

/** The ingest service: the one way items get in, the items read model, and deletion. */
@Module({})
export class IngestModule {
  static register(config: MemexConfig): DynamicModule {
    return {
      module: IngestModule,
      imports: [MemexModule.forService({ service: 'ingest', config, schema: 'ingest' })],
      providers: [ItemsProjector, ItemsService, NotesService],
    };
  }
}
