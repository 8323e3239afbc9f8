import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as contracts from '@memex/contracts';
import { eventCatalog, ServiceNames, type EventDefinition } from '@memex/contracts';

// Walks every service's source (tests and test harnesses aside: *.test.ts, test-support.ts, testing/): who publishes which event, and
// which events its handlers take. The publisher refuses another service's event at run time; this
// catches it before anything runs, and catches an event nobody publishes or two services publish.

const root = path.resolve(import.meta.dirname, '../..');
const services = fs
  .readdirSync(path.join(root, 'services'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(root, 'services', entry.name, 'src')))
  .map((entry) => entry.name);

/** Types in the catalog that no service publishes (yet, or any more), and why. */
const NOT_PUBLISHED: Record<string, string> = {
  'links.inferred': 'the tier 2–3 pipelines that infer links are not built yet',
  'identity.claimed': 'read from logs written before: claims are kept on MEMEX_CLAIMS since',
};

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'testing' ? [] : sourceFiles(full);
    const isTestCode = entry.name.endsWith('.test.ts') || entry.name === 'test-support.ts';
    return entry.name.endsWith('.ts') && !isTestCode ? [full] : [];
  });
}

const byName = new Map(
  (Object.entries(contracts) as [string, unknown][]).filter(
    (entry): entry is [string, EventDefinition] =>
      typeof entry[1] === 'object' && entry[1] !== null && 'owner' in entry[1] && 'data' in entry[1] && 'v' in entry[1],
  ),
);

/** `publish(Def, …)`, `draftOf(Def, …)` and `definition: Def` name what a service publishes. */
const PUBLISHES = /\b(?:publish|draftOf)\(\s*(\w+)\s*,|\bdefinition:\s*(\w+)\b/g;
/** `@On(Def)`, `@OnBatch(A, B)` and `.on(Def, …)` name what a service handles. */
const HANDLES = /@On(?:Batch)?\(([\w\s,]+)\)|\.on\(\s*(\w+)\s*,/g;

interface Use {
  service: string;
  file: string;
  name: string;
}

function scan(pattern: RegExp): Use[] {
  const uses: Use[] = [];
  for (const service of services) {
    for (const file of sourceFiles(path.join(root, 'services', service, 'src'))) {
      const text = fs.readFileSync(file, 'utf8');
      for (const match of text.matchAll(pattern)) {
        const names = (match[1] ?? match[2]!).split(',').map((name) => name.trim());
        for (const name of names.filter((n) => /^[A-Z]\w*$/.test(n))) {
          uses.push({ service, file: path.relative(root, file), name });
        }
      }
    }
  }
  return uses;
}

test('every service directory is a known service name', () => {
  assert.deepEqual(
    services.filter((service) => !(ServiceNames as readonly string[]).includes(service)),
    [],
  );
});

test('each event type is published by exactly one service: its owner', () => {
  const publishers = new Map<string, Set<string>>();
  for (const use of scan(PUBLISHES)) {
    const definition = byName.get(use.name);
    if (!definition) continue; // a definition of something else (an API method, a local value)
    assert.equal(
      use.service,
      definition.owner,
      `${use.file} publishes ${definition.type}, which ${definition.owner} owns`,
    );
    publishers.set(definition.type, (publishers.get(definition.type) ?? new Set()).add(use.service));
  }
  const latest = new Set(eventCatalog.list().map((definition) => definition.type));
  for (const type of latest) {
    const by = [...(publishers.get(type) ?? [])];
    if (type in NOT_PUBLISHED) {
      assert.deepEqual(by, [], `${type} is published now: take it off NOT_PUBLISHED`);
      continue;
    }
    assert.equal(by.length, 1, `${type} is published by ${by.length === 0 ? 'no service' : by.join(' and ')}`);
  }
  assert.ok(publishers.size >= 20, `found only ${publishers.size} published types: is the scan still matching?`);
});

test("every handler's event is in the catalog, at its latest version", () => {
  const uses = scan(HANDLES).filter((use) => byName.has(use.name) || /^[A-Z][a-z]+[A-Z]/.test(use.name));
  assert.ok(uses.length >= 30, `found only ${uses.length} handlers: is the scan still matching?`);
  for (const use of uses) {
    const definition = byName.get(use.name);
    assert.ok(definition, `${use.file} handles ${use.name}, which is no event in @memex/contracts`);
    assert.equal(
      eventCatalog.definition(definition.type)?.v,
      definition.v,
      `${use.file} handles ${definition.type} v${definition.v}, not its latest version`,
    );
  }
});

test('no service publishes by type name or appends to the log around the publisher', () => {
  for (const service of services) {
    for (const file of sourceFiles(path.join(root, 'services', service, 'src'))) {
      const text = fs.readFileSync(file, 'utf8');
      const where = path.relative(root, file);
      assert.doesNotMatch(text, /\bbindDraft\(/, `${where}: bindDraft is for tests and benches`);
      assert.doesNotMatch(text, /js\.publish\(\s*eventSubject/, `${where}: appends an event without the publisher`);
    }
  }
});
