import { runService } from '@memex/runtime';
import { InsightsModule } from './insights.module.js';

await runService('insights', (config) => InsightsModule.register(config));
