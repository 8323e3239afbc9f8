/**
 * What `memex worker` runs to extract its own files on its CPU (`@memex/ingest/extract`,
 * docs/sources.md "Workers"): ingest's item reader with every handler, and the encoding of its
 * reading that ingest takes instead of the bytes.
 */
export { ParsePool } from './commands/parse.js';
export { encodeReading, type WorkerReading } from './commands/worker-reading.js';
export { RejectedItem } from './domain/handlers/index.js';
