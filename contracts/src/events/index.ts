export * from './envelope.js';
export * from './items.js';
export * from './tokens.js';
export * from './catalog.js';
