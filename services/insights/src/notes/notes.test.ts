import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ingest, SignalsList } from '@memex/contracts';
import { startInsights, type InsightsHarness } from '../testing/harness.js';
import { parseNoteMarkdown } from './markdown.js';

describe('parseNoteMarkdown', () => {
  test('front matter, [[links]] and #tags in prose only, front matter tags first, each tag once', () => {
    const parsed = parseNoteMarkdown(
      [
        '---',
        'type: state',
        'tags: [Garden, "#plans"]',
        '---',
        '# Heading is not a tag',
        'Beds: see [[Garden Plan#Beds|the plan]] and [[Seeds]] #garden #2024 #soil/clay',
        '```',
        '[[In code]] #incode',
        '```',
        'Inline `[[in span]] #inspan` and <!-- [[in comment]] --> and a#b and #todo-',
      ].join('\n'),
    );
    assert.deepEqual(parsed.frontMatter, { type: 'state', tags: ['Garden', '#plans'] });
    assert.deepEqual(parsed.links, ['Garden Plan#Beds|the plan', 'Seeds']);
    assert.deepEqual(parsed.tags, ['Garden', 'plans', 'soil/clay', 'todo']);
  });

  test('a block that is not YAML is text; no front matter is an empty object', () => {
    assert.deepEqual(parseNoteMarkdown('---\n: [\n---\n[[A]]').frontMatter, {});
    assert.deepEqual(parseNoteMarkdown('[[A]] [[B\\|b]]'), { frontMatter: {}, links: ['A', 'B|b'], tags: [] });
  });
});

describe('Markdown documents are notes too', () => {
  let h: InsightsHarness;
  before(async () => {
    h = await startInsights();
  });
  after(async () => h.stop());

  test('links between documents resolve by file name; links to missing notes and attachments are told apart', async () => {
    const doc = (filename: string, text: string) => ({
      type: 'text/markdown',
      text,
      source: { kind: 'folder', id: 'vault' },
      external_id: filename,
      attributes: { filename },
    });
    const { results, seq } = await h.call(Ingest, {
      items: [
        doc('weekly-review.md', '# Weekly review, week 12\n\nNext: [[Roadmap]], [[Ideas]] and ![[whiteboard.png]].'),
        doc('ideas.md', '---\ntitle: Idea backlog\n---\nBack to [[weekly-review]].'),
      ],
    });
    assert.deepEqual(
      results.map((r) => r.status),
      ['created', 'created'],
    );
    const listed = await h.call(SignalsList, { min_seq: seq });
    assert.equal(listed.detection.notes, 2);
    assert.deepEqual(
      listed.signals.map((s) => [s.kind, s.detail['target'], s.notes.map((n) => n.title)]),
      [['dangling_link', 'Roadmap', ['Weekly review, week 12']]],
    );
  });
});
