export * from './subjects.js';
export * from './bus.js';
export * from './codec.js';
export * from './trace.js';
export * from './publisher.js';
export * from './log-reader.js';
export * from './events.js';
export * from './rpc.js';
