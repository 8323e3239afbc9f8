export * from './database.js';
export * from './migrations.js';
export * from './scope.js';
