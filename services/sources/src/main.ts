import { runService } from '@memex/runtime';
import { SourcesModule } from './sources.module.js';

await runService('sources', (config) => SourcesModule.register(config));
