import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { isAlive, terminate, waitForExit } from './process.js';
import { readStackState, StackRunningError, stopLeftoverServices, stopStack, type StackState } from './state.js';
import { ProcessSupervisor, type ManagedServer } from './supervisor.js';

const node = process.execPath;

function collect(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, text: () => text };
}

async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** A real process standing in for Postgres or NATS: stopping it is observable. */
function sleeperServer(name: string, stopped: string[]): ManagedServer {
  const child = spawn(node, ['-e', 'setInterval(() => {}, 1e6)'], { stdio: 'ignore' });
  const pid = child.pid!;
  return {
    name,
    pid,
    stopSignal: 'SIGTERM',
    killSignal: 'SIGKILL',
    async stop() {
      stopped.push(name);
      await terminate(pid, 'SIGTERM', 5000);
    },
  };
}

test('a crashing service is restarted with growing delays, its output prefixed', async () => {
  const out = collect();
  const supervisor = new ProcessSupervisor({ output: out.stream, restartDelayMs: 20 });
  let spawns = 0;
  supervisor.on('spawn', () => spawns++);
  supervisor.add({
    name: 'crasher',
    command: node,
    args: ['-e', 'console.log("up"); setTimeout(() => process.exit(3), 30)'],
  });
  await until('three starts', () => spawns >= 3);
  await supervisor.stop();
  assert.match(out.text(), /^crasher \| up$/m);
  assert.match(out.text(), /crasher \| exited \(code 3\); restarting in 20 ms/);
  assert.match(out.text(), /crasher \| exited \(code 3\); restarting in 40 ms/);
  assert.ok(supervisor.status()[0]!.restarts >= 2);
  assert.equal(supervisor.status()[0]!.running, false);
});

test('stop() ends services (SIGKILL after the grace period), then servers in reverse order', async () => {
  const out = collect();
  const stopped: string[] = [];
  const supervisor = new ProcessSupervisor({ output: out.stream, stopTimeoutMs: 300 });
  const servers = [sleeperServer('postgres', stopped), sleeperServer('nats', stopped)];
  for (const server of servers) supervisor.addServer(server);
  supervisor.add({
    name: 'polite',
    command: node,
    args: [
      '-e',
      'process.on("SIGTERM", () => { console.log("bye"); process.exit(0) }); setInterval(() => {}, 1e6); console.log("ready")',
    ],
  });
  supervisor.add({
    name: 'stubborn',
    command: node,
    args: ['-e', 'process.on("SIGTERM", () => {}); setInterval(() => {}, 1e6); console.log("ready")'],
  });
  await until('both services ready', () => (out.text().match(/\| ready/g) ?? []).length === 2);
  const pids = supervisor.status().map((s) => s.pid!);
  await supervisor.stop();
  assert.match(out.text(), /^polite {3}\| bye$/m);
  for (const pid of [...pids, ...servers.map((s) => s.pid)]) assert.equal(isAlive(pid), false, `pid ${pid}`);
  assert.deepEqual(stopped, ['nats', 'postgres']);
  assert.equal(out.text().includes('restarting'), false);
});

/** A `memex stack up` stand-in in its own process: one server, one service, signal handling. */
function startStackProcess(dir: string): { stateFile: string; pid: number; exited: Promise<number | null> } {
  const stateFile = path.join(dir, 'stack.json');
  const script = path.join(dir, 'stack-up.mjs');
  writeFileSync(
    script,
    `import { spawn } from 'node:child_process';
import { ProcessSupervisor, terminate } from ${JSON.stringify(new URL('./index.js', import.meta.url).href)};
const server = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e6)'], { stdio: 'ignore' });
const supervisor = new ProcessSupervisor({ stateFile: ${JSON.stringify(stateFile)}, logDir: ${JSON.stringify(path.join(dir, 'logs'))}, info: { url: 'http://x' } });
supervisor.addServer({ name: 'sleeper', pid: server.pid, stopSignal: 'SIGTERM', killSignal: 'SIGKILL', stop: () => terminate(server.pid, 'SIGTERM', 5000) });
supervisor.handleSignals();
supervisor.add({ name: 'svc', command: process.execPath, args: ['-e', 'setInterval(() => console.log("tick"), 50)'] });
`,
  );
  const child = spawn(node, [script], { stdio: 'ignore' });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { stateFile, pid: child.pid!, exited };
}

async function recordedStack(stateFile: string): Promise<StackState> {
  return until('the stack state with its service and server', () => {
    const state = existsSync(stateFile) ? readStackState(stateFile) : undefined;
    return state && state.services.length === 1 && state.servers.length === 1 ? state : undefined;
  });
}

function tempDir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'memex-supervisor-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('SIGTERM to the supervisor stops every process and removes the state file', async (t) => {
  const dir = tempDir(t);
  const stack = startStackProcess(dir);
  const state = await recordedStack(stack.stateFile);
  assert.equal(state.pid, stack.pid);
  assert.deepEqual(state.info, { url: 'http://x' });
  process.kill(stack.pid, 'SIGTERM');
  assert.equal(await stack.exited, 0);
  for (const p of [...state.services, ...state.servers]) assert.equal(isAlive(p.pid), false, p.name);
  assert.equal(existsSync(stack.stateFile), false);
  assert.ok(existsSync(path.join(dir, 'logs', 'svc.log')));
});

test('stopStack from another process stops a running stack; a second supervisor is refused', async (t) => {
  const dir = tempDir(t);
  const stack = startStackProcess(dir);
  const state = await recordedStack(stack.stateFile);
  assert.throws(() => new ProcessSupervisor({ stateFile: stack.stateFile }), StackRunningError);
  assert.equal(await stopStack(stack.stateFile), 'stopped');
  assert.equal(await stack.exited, 0);
  for (const p of [...state.services, ...state.servers]) assert.equal(isAlive(p.pid), false, p.name);
  assert.equal(await stopStack(stack.stateFile), 'not-running');
});

test('stopStack cleans up after a supervisor that was killed', async (t) => {
  const dir = tempDir(t);
  const stack = startStackProcess(dir);
  const state = await recordedStack(stack.stateFile);
  process.kill(stack.pid, 'SIGKILL');
  await stack.exited;
  assert.ok(isAlive(state.services[0]!.pid) && isAlive(state.servers[0]!.pid), 'children outlive a killed supervisor');
  assert.equal(await stopStack(stack.stateFile), 'cleaned-up');
  for (const p of [...state.services, ...state.servers]) assert.ok(await waitForExit(p.pid, 5000), p.name);
  assert.equal(existsSync(stack.stateFile), false);
});

test('a new stack stops the services a killed one left running, and keeps its servers for reuse', async (t) => {
  const dir = tempDir(t);
  const stack = startStackProcess(dir);
  const state = await recordedStack(stack.stateFile);
  await assert.rejects(stopLeftoverServices(stack.stateFile), StackRunningError);
  process.kill(stack.pid, 'SIGKILL');
  await stack.exited;
  assert.deepEqual(await stopLeftoverServices(stack.stateFile), ['svc']);
  assert.ok(await waitForExit(state.services[0]!.pid, 5000));
  assert.ok(isAlive(state.servers[0]!.pid), 'the server is left for the next start to attach to');
  assert.equal(await stopStack(stack.stateFile), 'cleaned-up');
  assert.ok(await waitForExit(state.servers[0]!.pid, 5000));
});
