// Entry of one worker thread (see pool.ts): runs a worker until the pool posts 'stop'.
import { parentPort, workerData } from 'node:worker_threads';
import { startWorker, type WorkerOptions } from './worker.js';

const worker = await startWorker(workerData as WorkerOptions);
parentPort!.postMessage('ready');
parentPort!.on('message', (message) => {
  if (message !== 'stop') return;
  void worker.stop().then(() => parentPort!.close());
});
