import { runService } from '@memex/runtime';
import { HeadModule } from './head.module.js';

await runService('head', (config) => HeadModule.register(config));
