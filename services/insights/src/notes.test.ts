import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ingest, NotePutV1, SignalsList } from '@memex/contracts';
import { newId } from '@memex/bus';
import { startInsights, type InsightsHarness } from './testing/harness.js';

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

  test('a note logged before note.put carried its Markdown (v1) is read through the upcast: same links, tags and front matter', async () => {
    const id = newId();
    const { seq } = await h.publisher.publish(NotePutV1, {
      subject: `item:${id}`,
      actor: { kind: 'user', id: 'owner' },
      kind: 'note',
      data: { id, title: 'Old plan', body: '---\naliases: [Garden plan]\n---\nSee [[Compost heap]] #garden' },
    });
    await h.applied(seq);
    const listed = await h.call(SignalsList, { min_seq: seq });
    const dangling = listed.signals.filter((s) => s.kind === 'dangling_link' && s.detail['target'] === 'Compost heap');
    assert.deepEqual(
      dangling.map((s) => s.notes.map((n) => n.title)),
      [['Old plan']],
    );
  });
});
