import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readMarkdown } from './index.js';

test('front matter, [[links]] and #tags in prose only, front matter tags first, each tag once', () => {
  const read = readMarkdown(
    [
      '---',
      'type: state',
      'tags: [Garden, "#plans"]',
      'up: "[[Home]]"',
      '---',
      '# Heading is not a tag',
      'Beds: see [[Garden Plan#Beds|the plan]] and [[Seeds]] #garden #2024 #soil/clay',
      '```',
      '[[In code]] #incode',
      '```',
      'Inline `[[in span]] #inspan` and <!-- [[in comment]] --> and a#b and #todo-',
    ].join('\n'),
  );
  assert.deepEqual(read.frontMatter, { type: 'state', tags: ['Garden', '#plans'], up: '[[Home]]' });
  assert.equal(read.frontMatterProblem, null);
  assert.deepEqual(read.links, [
    { target: 'Home', heading: null, alias: null, embed: false },
    { target: 'Garden Plan', heading: 'Beds', alias: 'the plan', embed: false },
    { target: 'Seeds', heading: null, alias: null, embed: false },
  ]);
  assert.deepEqual(read.tags, ['Garden', 'plans', 'soil/clay', 'todo']);
  assert.deepEqual(read.headings, [{ level: 1, text: 'Heading is not a tag' }]);
  assert.ok(read.body.startsWith('# Heading'));
});

test('a block that is not YAML stays text and says why; a scalar block is dropped; none is null', () => {
  const broken = readMarkdown('---\n: [\n---\n[[A]]');
  assert.equal(broken.frontMatter, null);
  assert.match(broken.frontMatterProblem ?? '', /^front matter is not valid YAML/);
  assert.equal(broken.body, '---\n: [\n---\n[[A]]');
  assert.deepEqual(
    broken.links.map((l) => l.target),
    ['A'],
  );
  const scalar = readMarkdown('---\njust a string\n---\nBody\n');
  assert.equal(scalar.frontMatter, null);
  assert.equal(scalar.frontMatterProblem, 'front matter is not a YAML mapping; ignored');
  assert.equal(scalar.body, 'Body\n');
  assert.deepEqual(readMarkdown('[[A]] [[B\\|b]]'), {
    frontMatter: null,
    frontMatterProblem: null,
    body: '[[A]] [[B\\|b]]',
    links: [
      { target: 'A', heading: null, alias: null, embed: false },
      { target: 'B', heading: null, alias: 'b', embed: false },
    ],
    tags: [],
    headings: [],
  });
});
