import fs from 'node:fs';
import path from 'node:path';
import { MemexClient } from '@memex/client';
import { loadConfig, type MemexConfig } from '@memex/config';

/** How the CLI reaches the gateway: MEMEX_URL, and MEMEX_TOKEN or the owner token in MEMEX_HOME. */
export function gatewayUrl(config: MemexConfig = loadConfig()): string {
  return process.env.MEMEX_URL || `http://${config.host}:${config.port}`;
}

export function readToken(config: MemexConfig = loadConfig()): string {
  if (process.env.MEMEX_TOKEN) return process.env.MEMEX_TOKEN;
  const file = path.join(config.home, 'owner-token');
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    throw new Error(`no token: set MEMEX_TOKEN, or start the memex once so that ${file} exists (npm start)`);
  }
}

export function client(): MemexClient {
  const config = loadConfig();
  return new MemexClient({ url: gatewayUrl(config), token: readToken(config) });
}

/** Prints JSON when asked for, otherwise the human form. */
export function output(json: boolean, value: unknown, human: () => string): void {
  console.log(json ? JSON.stringify(value, null, 2) : human());
}

/** A `--limit` of a failed-work listing: a whole number the methods take (1 to 10,000). */
export function listLimitOption(value: string): number {
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
    throw new Error(`--limit must be a whole number from 1 to 10000, got "${value}"`);
  return limit;
}

/** `--seq <seqs...>`: positive integers (a log's or a queue's sequences), each checked. */
export function seqsOption(values: string[] | undefined, what: string): number[] | undefined {
  return values?.map((value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--seq ${value}: ${what} is a positive integer`);
    return n;
  });
}
