import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestStack } from './stack.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = path.join(ROOT, 'cli/bin/memex.js');

/**
 * Which test file runs which README section's `sh` examples. Every section with examples is here
 * or in NOT_RUN (readme.test.ts checks), so a new one cannot go untested without saying so.
 */
export const SECTIONS_BY_TEST = {
  'readme.test.ts': [
    'Two commands',
    'Using it',
    'Tokens for agents',
    'Bringing your archives in',
    'Finding things',
    'The graph',
    'Papers and citations',
    'Summaries, topics and commitments (a chat model)',
    'Calendar and contacts',
    'Patterns across your notes',
    'Connecting the agent host (the head)',
    'Rebuilding a read model',
  ],
  'readme-sources.test.ts': [
    'Importing a Google Takeout',
    'Photos and videos',
    'Watched folders and sources',
    'Folders on another machine (memex worker)',
  ],
  'readme-mail.test.ts': ['Connecting Gmail', 'Connecting an IMAP account'],
};

/** Sections with examples that no test runs, each with why. */
export const NOT_RUN: Record<string, string> = {
  Development: 'builds and runs the whole suite, of which these tests are part',
};

/**
 * A section's time limit: each command is a CLI process, which took 15 to 70 s to start and answer
 * on the 2-core machine at load 20–50 (2.5 s of CPU).
 */
export const SECTION_TIMEOUT_MS = 900_000;

/** Commands a reader runs that no test does (the suite is itself what they start). */
const NOT_HERE = [/^npm /];

export interface Example {
  section: string;
  command: string;
}

/** The `sh` blocks of the README, one command per entry (`\\` continuations joined), with their sections. */
export function readmeExamples(markdown = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')): Example[] {
  const out: Example[] = [];
  let section = '';
  let inBlock = false;
  let pending = '';
  for (const line of markdown.split('\n')) {
    const heading = /^#{2,3} (.+)$/.exec(line);
    if (heading && !inBlock) section = heading[1]!.trim();
    else if (line.startsWith('```')) inBlock = !inBlock && line.trim() === '```sh';
    else if (inBlock) {
      pending += line.endsWith('\\') ? `${line.slice(0, -1)} ` : line;
      if (line.endsWith('\\')) continue;
      const command = pending.trim();
      pending = '';
      if (command && !command.startsWith('#')) out.push({ section, command });
    }
  }
  return out;
}

export interface ShResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a shell command without blocking this process (the stack it talks to runs here). */
export function sh(
  command: string,
  options: { cwd: string; env: NodeJS.ProcessEnv; onStdout?: (stdout: string) => void },
): Promise<ShResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 180_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      options.onStdout?.(stdout);
    });
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** What a run of examples shares: the shell's variables and what earlier commands printed. */
export interface ReadmeSession {
  home: string;
  env: NodeJS.ProcessEnv;
  /** Variables set by `NAME=$(…)` and `export NAME=…` lines, for the commands after them. */
  vars: Record<string, string>;
  /** The last item id (a ULID) an earlier command printed: what `01J…` stands for. */
  lastId: string;
  /** The last `"seq":n` an earlier command printed: what `"min_seq":42` stands for. */
  lastSeq: string;
  outputs: Array<{ command: string; result: ShResult }>;
  /** Commands left running (a worker), for the test to stop. */
  running: ChildProcess[];
}

/** A reader at `home` whose `npx memex` talks to the test's stack (and whatever else `env` adds). */
export function readmeSession(home: string, stack: TestStack, env: NodeJS.ProcessEnv = {}): ReadmeSession {
  return {
    home,
    env: { ...process.env, HOME: home, MEMEX_URL: stack.url, MEMEX_HOME: stack.config.home, ...env },
    vars: {},
    lastId: '',
    lastSeq: '0',
    outputs: [],
    running: [],
  };
}

export interface RunOptions {
  /** Commands this run leaves out (what they read is not on this machine). */
  skip?: (command: string) => boolean;
  /** The command as this test runs it (a placeholder the reader supplies, an address of a fake). */
  prepare?: (command: string, session: ReadmeSession) => string | Promise<string>;
  /** Before the command runs (wait for what it reads to be there). */
  before?: (command: string, session: ReadmeSession) => Promise<void>;
  /** Checks a command's result; the default wants exit 0 and no `"error":` in its output. */
  check?: (command: string, result: ShResult) => boolean;
  /** Commands that keep running until stopped (a worker): started and left running. */
  background?: (command: string) => boolean;
  /** What the command printed so far, as it prints it (to answer it while it waits). */
  onStdout?: (command: string, stdout: string) => void;
}

/** The command with the reader's local addresses and `npx memex` pointed at this test's stack. */
function localized(command: string, session: ReadmeSession): string {
  const url = new URL(session.env.MEMEX_URL!);
  return command
    .replaceAll('localhost:7777', `127.0.0.1:${url.port}`)
    .replaceAll('npx memex', `${JSON.stringify(process.execPath)} ${CLI}`)
    .replaceAll('01J…', session.lastId)
    .replace('"min_seq":42', `"min_seq":${session.lastSeq}`);
}

/**
 * Runs examples in order as a reader types them, each in its own shell: `NAME=$(…)` and `export
 * NAME=…` lines carry their variable to the commands after them. Fails on the first that does not
 * succeed, with its output.
 */
export async function runExamples(
  examples: Example[],
  session: ReadmeSession,
  options: RunOptions = {},
): Promise<void> {
  for (const { section, command } of examples) {
    if (NOT_HERE.some((pattern) => pattern.test(command)) || options.skip?.(command)) continue;
    await options.before?.(command, session);
    const run = localized(await (options.prepare?.(command, session) ?? command), session);
    if (options.background?.(command)) {
      const child = spawn('bash', ['-c', `exec ${run}`], {
        cwd: session.home,
        env: { ...session.env, ...session.vars },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      session.running.push(child);
      continue;
    }
    const started = Date.now();
    const assigned = /^(?:export )?(\w+)=/.exec(run)?.[1];
    // The line as written, then its variable printed, so the next commands get it.
    const result = await sh(assigned ? `${run}\nprintf %s "$${assigned}"` : run, {
      cwd: session.home,
      env: { ...session.env, ...session.vars },
      onStdout: (stdout) => options.onStdout?.(command, stdout),
    });
    console.log(`# ${section}: ${command} (${Date.now() - started} ms)`);
    const where = `${section}: ${command}\nran: ${run}\nexit ${result.status}\n${result.stdout}\n${result.stderr}`;
    if (options.check) assert.ok(options.check(command, result), where);
    else {
      assert.equal(result.status, 0, where);
      assert.doesNotMatch(result.stdout, /"error"\s*:/, where);
    }
    if (assigned) session.vars[assigned] = result.stdout;
    session.lastId = [...result.stdout.matchAll(/\b0[0-9A-HJKMNP-TV-Z]{25}\b/g)].at(-1)?.[0] ?? session.lastId;
    session.lastSeq = /"seq":(\d+)/.exec(result.stdout)?.[1] ?? session.lastSeq;
    session.outputs.push({ command, result });
  }
}

/** What the last command matching `pattern` printed. */
export function printed(session: ReadmeSession, pattern: RegExp): string {
  const found = session.outputs.findLast((o) => pattern.test(o.command));
  assert.ok(found, `a command matching ${pattern} ran`);
  return found.result.stdout;
}

/** The examples of these sections, in README order; each section must still have some. */
export function examplesOf(sections: string[]): Example[] {
  const examples = readmeExamples().filter((e) => sections.includes(e.section));
  assert.deepEqual(
    sections.filter((s) => !examples.some((e) => e.section === s)),
    [],
    'every section still has examples',
  );
  return examples;
}
