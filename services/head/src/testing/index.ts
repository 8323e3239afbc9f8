/** Test and benchmark helpers (`@memex/head/testing`): never imported by the service itself. */
export * from './fake-head.js';
