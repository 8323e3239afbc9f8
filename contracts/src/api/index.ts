export * from './method.js';
export * from './items.js';
export * from './tokens.js';
export * from './admin.js';
export * from './catalog.js';
export * from './openapi.js';
export * from './proto.js';
