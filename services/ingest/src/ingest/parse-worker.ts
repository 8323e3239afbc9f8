/** Worker thread entry: reads items for the ParsePool, several at a time. */
import { parentPort } from 'node:worker_threads';
import { createRegistry } from '../handlers/index.js';
import { readItem, type ParseRequest } from './parse.js';

const registry = createRegistry();

parentPort?.on('message', async ({ id, request }: { id: number; request: ParseRequest }) => {
  // Copied back by the structured clone (small Buffers share Node's pool, which cannot be transferred).
  parentPort?.postMessage({ id, answer: await readItem(registry, request) });
});
