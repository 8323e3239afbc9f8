export * from './env.js';
export * from './service-process.js';
export * from './random.js';
export * from './wait.js';
export * from './shared.js';
export * from './small-filesystem.js';
export * from './item-meta.js';
export * from './debian-source.js';
export { freePort } from '@memex/stack';
