/** Worker thread entry: extracts PDFs sent by pdf.ts, one message at a time. */
import { parentPort } from 'node:worker_threads';
import { extractPdf } from './pdf-extract.js';

// pdf.js rejects some internal promises nobody awaits when a file is damaged (the extraction
// itself still settles). In this thread they are noise; in the service's thread they would
// terminate the process.
process.on('unhandledRejection', () => {});

parentPort?.on('message', async ({ id, data }: { id: number; data: Uint8Array }) => {
  parentPort?.postMessage({ id, result: await extractPdf(data) });
});
