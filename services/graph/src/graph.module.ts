import { Module, type DynamicModule } from '@nestjs/common';
import type { MemexConfig } from '@memex/config';
import { MemexModule } from '@memex/runtime';
import { Consistent } from './commands/consistent.js';
import { CommitmentsCommands } from './commands/commitments.service.js';
import { LinksService } from './commands/links.service.js';
import { TrailsService } from './commands/trails.service.js';
import { GraphProjector } from './projection/graph.projector.js';
import { BriefService } from './queries/brief.service.js';
import { CommitmentsQueries } from './queries/commitments.service.js';
import { EntitiesService } from './queries/entities.service.js';
import { MentionService } from './queries/mention.service.js';
import { ReviewService } from './queries/review.service.js';

/** The graph service: things, links with evidence, identity and review, trails, briefs and mentions. */
@Module({})
export class GraphModule {
  static register(config: MemexConfig): DynamicModule {
    return {
      module: GraphModule,
      imports: [MemexModule.forService({ service: 'graph', config, schema: 'graph' })],
      providers: [
        GraphProjector,
        Consistent,
        EntitiesService,
        LinksService,
        CommitmentsCommands,
        CommitmentsQueries,
        ReviewService,
        TrailsService,
        BriefService,
        MentionService,
      ],
    };
  }
}
