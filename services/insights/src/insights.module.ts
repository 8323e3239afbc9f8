import { Module, type DynamicModule } from '@nestjs/common';
import type { MemexConfig } from '@memex/config';
import { MemexModule } from '@memex/runtime';
import { DetectionService } from './commands/detection.service.js';
import { InferencesService } from './commands/inferences.service.js';
import { TriageService } from './commands/triage.service.js';
import { InsightsProjector } from './projection/insights.projector.js';
import { InferencesQueries } from './queries/inferences.service.js';
import { SignalsService } from './queries/signals.service.js';

/** The inference engine (seed 001): notes read model, lazy signal detection, triage, inferences with invalidation. */
@Module({})
export class InsightsModule {
  static register(config: MemexConfig): DynamicModule {
    return {
      module: InsightsModule,
      imports: [MemexModule.forService({ service: 'insights', config, schema: 'insights' })],
      providers: [
        InsightsProjector,
        DetectionService,
        SignalsService,
        TriageService,
        InferencesService,
        InferencesQueries,
      ],
    };
  }
}
