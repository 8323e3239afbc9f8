export { SourcesModule } from './sources.module.js';
