import { runService } from '@memex/runtime';
import { IngestModule } from './ingest.module.js';

await runService('ingest', (config) => IngestModule.register(config));
