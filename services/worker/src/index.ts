export { runWorker, type RunningWorker, type WorkerOptions } from './worker.js';
