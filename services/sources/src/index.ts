export { SourcesModule } from './sources.module.js';
// The folder scanner's parts, for a worker that scans its own folders (memex worker, cli/src/worker).
export { readFile, walk } from './watch/disk.js';
export { differences, externalIdOf, type DiskFile, type KnownFile } from './domain/files.js';
