import { runService } from '@memex/runtime';
import { GraphModule } from './graph.module.js';

await runService('graph', (config) => GraphModule.register(config));
