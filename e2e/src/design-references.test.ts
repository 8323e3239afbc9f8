import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';

// Code comments cite design notes that live beside the repository ("DESIGN.md §3", "seed §4.5");
// docs/architecture.md's "Design notes the code cites" says what each one says. This walks the
// source and checks that every section cited there is one that page explains.

const root = path.resolve(import.meta.dirname, '../..');
const TOPS = ['contracts', 'libs', 'services', 'cli', 'e2e', 'bench', 'web', 'deploy'];
const SOURCE = /\.(ts|tsx|js|mjs)$/;

function sourceFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'dist' ? [] : sourceFiles(full);
    return SOURCE.test(entry.name) ? [full] : [];
  });
}

/** `DESIGN.md §3`, `seed §4.5`, `Seed §5's`, `seed 000 §3.2`: the document and the section. */
const CITATION = /\b(DESIGN(?:\.md)?|[Ss]eed(?: \d{3})?) §(\d+(?:\.\d+)*)/g;

/** The page's section on cited notes: DESIGN.md's sections as `DESIGN.md §n`, the seed's as `§n` after `seed §1`. */
function explained(): { design: string; seed: string } {
  const page = fs.readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');
  const start = page.indexOf('## Design notes the code cites');
  assert.ok(start >= 0, 'docs/architecture.md has its "Design notes the code cites" section');
  const section = page.slice(start, page.indexOf('\n## ', start + 1));
  const seedFrom = section.indexOf('**seed §1**');
  assert.ok(seedFrom >= 0, 'the section lists the seed sections from **seed §1**');
  return { design: section.slice(0, seedFrom), seed: section.slice(seedFrom) };
}

const mentions = (text: string, citation: string) =>
  new RegExp(`${citation.replace(/\./g, '\\.')}(?!\\.?\\d)`).test(text);

test('every "DESIGN.md §n" and "seed §n" a code comment cites is explained in docs/architecture.md', () => {
  const { design, seed } = explained();
  const missing: string[] = [];
  for (const file of TOPS.flatMap((top) => sourceFiles(path.join(root, top)))) {
    for (const match of fs.readFileSync(file, 'utf8').matchAll(CITATION)) {
      const [cited, document, section] = match;
      const found = document!.startsWith('DESIGN')
        ? mentions(design, `DESIGN.md §${section}`)
        : mentions(seed, `§${section}`);
      if (!found) missing.push(`${path.relative(root, file)}: ${cited}`);
    }
  }
  assert.deepEqual(missing, [], 'cited sections docs/architecture.md does not explain');
});

test('the check finds what it looks for', () => {
  const { design, seed } = explained();
  assert.ok(mentions(design, 'DESIGN.md §3'));
  assert.ok(mentions(seed, '§4.5'));
  assert.ok(!mentions(seed, '§4.9'), 'a section the page does not list is missing');
  assert.deepEqual(
    [...'seed 000 §3.2, DESIGN §5 and Seed §5.1'.matchAll(CITATION)].map((m) => `${m[1]} ${m[2]}`),
    ['seed 000 3.2', 'DESIGN 5', 'Seed 5.1'],
  );
});
