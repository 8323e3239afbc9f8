// Entry of one worker thread (see pool.ts): runs a worker until the pool posts 'stop'.
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { nicenessFromEnv } from './pool.js';
import { startWorker, type WorkerOptions } from './worker.js';

// This thread only (Linux keeps a niceness per thread): the service's own thread stays as it is.
// Never below the niceness it started with, which only a privileged process may lower.
setPriority(Math.max(getPriority(), nicenessFromEnv()));
const worker = await startWorker(workerData as WorkerOptions);
parentPort!.postMessage('ready');
parentPort!.on('message', (message) => {
  if (message !== 'stop') return;
  void worker.stop().then(() => parentPort!.close());
});
