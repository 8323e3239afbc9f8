export { IngestModule } from './ingest.module.js';
