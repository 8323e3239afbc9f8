/** What publishing a heartbeat needs of a NATS connection (a `NatsConnection` is one). */
interface Publisher {
  publish(subject: string, payload: string): void;
}

/** What a test's worker says of itself (`WorkerHeartbeat` in libs/locations, less its timing). */
export interface SpokenHeartbeat {
  name: string;
  folders: string[];
  extracts?: boolean;
  counts?: { files: number; items: number; failed?: number };
  jobs?: { extract: number; derive: number };
  failures?: Array<{ path: string; reason: string; modified_at: string }>;
}

/**
 * A test speaking a `memex worker`'s heartbeat (`memex.worker.<name>.heartbeat`) every 300 ms,
 * for the sources service to list it with these counts, jobs and failures; the returned function
 * stops it. The real worker's own heartbeats are tested in cli/src/worker/worker.test.ts.
 */
export function speakWorkerHeartbeat(nc: Publisher, heard: SpokenHeartbeat): () => void {
  const startedAt = new Date().toISOString();
  const beat = () =>
    nc.publish(
      `memex.worker.${heard.name}.heartbeat`,
      JSON.stringify({ ...heard, interval_ms: 300, started_at: startedAt }),
    );
  beat();
  const beating = setInterval(beat, 300);
  return () => clearInterval(beating);
}
