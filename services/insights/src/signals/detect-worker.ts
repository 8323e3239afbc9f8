import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import { detectIfChanged, type DetectionRun, type EngineConfig, type EngineNote } from '../engine/index.js';

interface Job {
  notes: EngineNote[];
  config: EngineConfig;
  previousFingerprint: string | undefined;
}

/**
 * The engine's detection in a worker thread: at 10⁵ notes it computes for most of a minute, which
 * on the service's own thread would stall every request it serves (and the projector).
 */
export function detectInWorker(job: Job): Promise<DetectionRun> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: null });
    worker.once('message', (run: DetectionRun) => {
      resolve(run);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`detection worker exited (code ${code}) before answering`)));
    worker.postMessage(job);
  });
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  port.once('message', (job: Job) => {
    port.postMessage(detectIfChanged(job.notes, job.config, job.previousFingerprint));
  });
}
