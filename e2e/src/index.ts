export * from './stack.js';
export * from './mail.js';
export * from './web-browser.js';
export * from './worker-heartbeat.js';
