import { runService } from '@memex/runtime';
import { MediaModule } from './media.module.js';

await runService('media', (config) => MediaModule.register(config));
