// A standalone worker host for another machine: `MEMEX_NATS_URL=… MEMEX_BLOBS_DIR=… node services/pipelines/dist/workers/main.js`.
// It needs only NATS and the blobs directory; the scheduler runs with the pipelines service.
import { withoutCredentials } from '@memex/bus';
import { loadConfig } from '@memex/config';
import { WorkerPool, workersFromEnv } from './pool.js';

const config = loadConfig();
const pool = new WorkerPool(workersFromEnv() || 1, { natsUrl: config.natsUrl, blobsDir: config.blobsDir });
await pool.start();
console.log(`memex pipelines: ${pool.workers} workers on ${withoutCredentials(config.natsUrl)}`);
const stop = () => void pool.stop().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
