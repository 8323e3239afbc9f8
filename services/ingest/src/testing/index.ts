/** Test and benchmark helpers (`@memex/ingest/testing`): never imported by the service itself. */
export * from './archive.js';
export * from './service.js';
export { docx, pdf } from '../domain/handlers/testing/build.js';
export { bmp, BITMAPS, stripes, type BmpSpec, type Rgba } from '../domain/handlers/testing/bmp.js';
export { outlookMsg, type OutlookMessage } from '../domain/handlers/testing/outlook-msg.js';
