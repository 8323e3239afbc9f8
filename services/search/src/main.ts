import { runService } from '@memex/runtime';
import { SearchModule } from './search.module.js';

await runService('search', (config) => SearchModule.register(config));
