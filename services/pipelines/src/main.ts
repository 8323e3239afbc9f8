import { runService } from '@memex/runtime';
import { PipelinesModule } from './pipelines.module.js';

await runService('pipelines', (config) => PipelinesModule.register(config));
