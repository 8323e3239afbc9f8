import { TaskPool } from '@memex/workers';
import { detectIfChanged, type DetectionRun, type EngineConfig, type EngineNote } from '../domain/engine/index.js';

interface Job {
  notes: EngineNote[];
  config: EngineConfig;
  previousFingerprint: string | undefined;
}

/** The detection worker's task (this module is also the worker). */
export default function detect(job: Job): DetectionRun {
  return detectIfChanged(job.notes, job.config, job.previousFingerprint);
}

/**
 * The engine's detection in a worker thread: at 10⁵ notes it computes for most of a minute, which
 * on the service's own thread would stall every request it serves (and the projector).
 */
const detection = new TaskPool<Job, DetectionRun>({
  name: 'signal detection',
  script: new URL(import.meta.url),
  threads: 1,
  heapMb: 4096,
});

export function detectInWorker(job: Job): Promise<DetectionRun> {
  return detection.run(job);
}
