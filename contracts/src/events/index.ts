export * from './envelope.js';
export * from './items.js';
export * from './tokens.js';
export * from './mail.js';
export * from './pipelines.js';
export * from './graph.js';
export * from './insights.js';
export * from './catalog.js';
