import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { configEnv, REPO_ROOT, type MemexConfig } from '@memex/config';

/**
 * A service as its own process, the way `memex stack up` runs it (its compiled main under this
 * config), for tests that kill it and benchmarks that measure it apart from their own process.
 */
export function spawnService(
  config: MemexConfig,
  service: string,
  stdio: StdioOptions = ['ignore', 'ignore', 'inherit'],
): ChildProcess {
  const main = path.join(REPO_ROOT, 'services', service, 'dist', 'main.js');
  if (!fs.existsSync(main)) throw new Error(`${main} is missing: build first (npx tsc -b)`);
  return spawn(process.execPath, [main], { env: { ...process.env, ...configEnv(config), NO_COLOR: '1' }, stdio });
}

/** Resolves once the gateway at `url` reports every named service ready. */
export async function servicesReady(url: string, services: string[], timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let waiting = services;
  while (Date.now() < deadline) {
    const response = await fetch(`${url}/healthz`).catch(() => undefined);
    if (response) {
      const health = (await response.json()) as { services?: Array<{ service: string; ready: boolean }> };
      const ready = new Set((health.services ?? []).filter((s) => s.ready).map((s) => s.service));
      waiting = services.filter((service) => !ready.has(service));
      if (waiting.length === 0) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`not ready after ${timeoutMs / 1000} s: ${waiting.join(', ')}`);
}
