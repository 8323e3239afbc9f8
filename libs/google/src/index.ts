export * from './endpoints.js';
export * from './client-secrets.js';
export * from './token-store.js';
export * from './retry.js';
export * from './oauth.js';
export * from './apis.js';
