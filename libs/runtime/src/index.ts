export * from './tokens.js';
export * from './decorators.js';
export * from './call.js';
export * from './projection.js';
export * from './host.js';
export * from './providers.js';
export * from './memex.module.js';
export * from './bootstrap.js';
