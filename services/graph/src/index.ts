export { GraphModule } from './graph.module.js';
