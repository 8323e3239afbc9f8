import { Module, type DynamicModule } from '@nestjs/common';
import type { MemexConfig } from '@memex/config';
import { MemexModule } from '@memex/runtime';
import { FreshVectorMover } from './projection/fresh-vector-mover.js';
import { SearchProjector } from './projection/search.projector.js';
import { SEARCH_DATABASE_SETTINGS, SearchService } from './queries/search.service.js';

/** The search service: its projector (schema `search`), the mover of its fresh vectors, and hybrid search over it. */
@Module({})
export class SearchModule {
  static register(config: MemexConfig): DynamicModule {
    return {
      module: SearchModule,
      imports: [
        MemexModule.forService({
          service: 'search',
          config,
          schema: 'search',
          databaseSettings: SEARCH_DATABASE_SETTINGS,
        }),
      ],
      providers: [SearchProjector, FreshVectorMover, SearchService],
    };
  }
}
