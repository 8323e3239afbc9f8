import { Module, type DynamicModule } from '@nestjs/common';
import type { MemexConfig } from '@memex/config';
import { MemexModule } from '@memex/runtime';
import { InferencesService } from './inferences/inferences.service.js';
import { InsightsProjector } from './projection/insights.projector.js';
import { DetectionService } from './signals/detection.service.js';
import { SignalsService } from './signals/signals.service.js';

/** The inference engine (seed 001): notes read model, lazy signal detection, triage, inferences with invalidation. */
@Module({})
export class InsightsModule {
  static register(config: MemexConfig): DynamicModule {
    return {
      module: InsightsModule,
      imports: [MemexModule.forService({ service: 'insights', config, schema: 'insights' })],
      providers: [InsightsProjector, DetectionService, SignalsService, InferencesService],
    };
  }
}
