import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { durablePostgres } from '@memex/testing';
import { withRatio, type BenchResult } from './result.js';
import { suites } from './suites/index.js';

// Postgres as the stack runs it: a bench without fsync measured writes the user never gets.
durablePostgres();

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !(name in suites));
if (unknown.length > 0) {
  console.error(`unknown suite(s) ${unknown.join(', ')}; known: ${Object.keys(suites).join(', ')}`);
  process.exit(2);
}
const results: BenchResult[] = [];
for (const [name, load] of Object.entries(suites)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  console.log(`\n== ${name}`);
  for (const result of (await (await load())()).map(withRatio)) {
    results.push(result);
    const ref = result.reference
      ? `  (reference ${result.reference.name}: ${result.reference.value} ${result.unit}; ratio ${result.ratio})`
      : '';
    console.log(`${result.name}: ${result.value} ${result.unit}${ref}${result.notes ? `  — ${result.notes}` : ''}`);
  }
}
const dir = path.resolve(import.meta.dirname, '../results');
fs.mkdirSync(dir, { recursive: true });
const file = path.join(dir, `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
fs.writeFileSync(
  file,
  JSON.stringify(
    { machine: { cpus: os.cpus().length, memory: os.totalmem(), node: process.version }, results },
    null,
    2,
  ),
);
console.log(`\nmachine-readable results: ${file}`);
process.exit(0);
