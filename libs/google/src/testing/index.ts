export * from './fake-server.js';
export * from './fake-gmail.js';
