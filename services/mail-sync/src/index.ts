export * from './mail-sync.module.js';
