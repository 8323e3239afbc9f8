export * from './errors.js';
export * from './validation.js';
export * from './scope.js';
export * from './files.js';
export * from './papers.js';
export * from './query.js';
export * from './events/index.js';
export * from './api/index.js';
