#!/usr/bin/env node
// `npm test`: one Postgres (with pgvector) for the whole run on a free port in a temp dir, then
// every compiled test file under node:test. Each test makes its own database and NATS server,
// so the suite never touches a running stack and files can run in parallel.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtinGloveTablePath } from '@memex/embeddings';
import { freePort, startPostgres } from '@memex/stack';

const root = path.resolve(import.meta.dirname, '../../..');
const only = process.argv.slice(2);

function testFiles() {
  const found = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules') continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.test.js') && full.includes(`${path.sep}dist${path.sep}`)) found.push(full);
    }
  };
  for (const top of ['contracts', 'libs', 'services', 'cli', 'e2e']) {
    const dir = path.join(root, top);
    if (fs.existsSync(dir)) walk(dir);
  }
  return found.filter((file) => only.length === 0 || only.some((pattern) => file.includes(pattern))).sort();
}

// Every test reads the built-in embedder's table from one folder kept between runs, converted here
// once (the first run on a machine, or after the word-vector package changes), not per test.
const embeddingsCache = process.env.MEMEX_EMBEDDINGS_CACHE || path.join(os.tmpdir(), 'memex-test-embeddings');
const started = Date.now();
await builtinGloveTablePath(embeddingsCache);
if (Date.now() - started > 1000)
  console.log(`built-in embedding table ready in ${embeddingsCache} (${Date.now() - started} ms)`);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-test-pg-'));
fs.chmodSync(dataDir, 0o755);
const postgres = await startPostgres({
  dataDir: path.join(dataDir, 'data'),
  port: await freePort(),
  database: 'postgres',
  detached: false,
  durable: false,
});
let code = 1;
try {
  const files = testFiles();
  if (files.length === 0) throw new Error('no compiled test files found: run `npm run build` first');
  const child = spawn(
    process.execPath,
    ['--test', '--test-concurrency=2', '--test-timeout=300000', '--test-reporter=spec', ...files],
    {
      stdio: 'inherit',
      env: { ...process.env, MEMEX_TEST_PG_URL: postgres.url, MEMEX_EMBEDDINGS_CACHE: embeddingsCache },
    },
  );
  code = await new Promise((resolve) => child.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))));
} finally {
  await postgres.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
process.exit(code);
