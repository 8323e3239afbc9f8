import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { MemexClient } from '@memex/client';
import { DEFAULT_SERVICES, loadConfig, REPO_ROOT } from '@memex/config';
import { freePort } from '@memex/stack';
import { createTestEnv, servicesReady, spawnService, type TestEnv } from '@memex/testing';

/** Every service as `npm start` runs them, each its own process, on a fresh test environment. */
export interface WholeStack {
  env: TestEnv;
  services: string[];
  processes: ChildProcess[];
  url: string;
  token: string;
  client: MemexClient;
  stop(): Promise<void>;
}

export async function startWholeStack(): Promise<WholeStack> {
  const services = [...DEFAULT_SERVICES];
  // MEMEX_INGEST_MAX_LAG as a user sets it (0: no backpressure by projector lag, to compare).
  const { ingestMaxLag } = loadConfig();
  const env = await createTestEnv({ port: await freePort(), services, rpcTimeoutMs: 120_000, ingestMaxLag });
  const processes = services.map((service) => spawnService(env.config, service));
  // Once, however often asked (a suite stops it before its peers run, and again when it ends).
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      for (const child of processes) child.kill('SIGTERM');
      await Promise.all(processes.map((child) => (child.exitCode === null ? once(child, 'exit') : undefined)));
      await env.stop();
    })());
  try {
    const url = `http://127.0.0.1:${env.config.port}`;
    await servicesReady(url, services);
    const token = fs.readFileSync(path.join(env.home, 'owner-token'), 'utf8').trim();
    return { env, services, processes, url, token, client: new MemexClient({ url, token }), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** `memex import mbox <mbox> --source <source>` as a user runs it; resolves when it exits. */
export function importMbox(stack: WholeStack, mbox: string, source: string): Promise<void> {
  const cli = spawn(
    process.execPath,
    [path.join(REPO_ROOT, 'cli', 'bin', 'memex.js'), 'import', 'mbox', mbox, '--source', source, '--json'],
    {
      env: { ...process.env, MEMEX_URL: stack.url, MEMEX_TOKEN: stack.token, MEMEX_HOME: stack.env.home },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  cli.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((resolve, reject) =>
    cli.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`memex import exited with ${code}: ${out}`)),
    ),
  );
}
