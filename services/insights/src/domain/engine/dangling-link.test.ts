import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { detectDanglingLinks } from './dangling-link.js';
import { normalizeLinkTarget } from './corpus.js';
import { CorpusBuilder, makeNote } from './synthetic.js';

const AT = new Date('2023-05-01T00:00:00Z');

describe('detectDanglingLinks', () => {
  it('fires once per missing target, listing every note that links to it', () => {
    const b = new CorpusBuilder(1);
    const a = b.add({ createdAt: AT, links: ['Theory of Change'] });
    const c = b.add({ createdAt: AT, links: ['[[theory of  change#Why|the theory]]', 'Theory of Change'] });
    const signals = detectDanglingLinks(b.notes);
    assert.equal(signals.length, 1);
    assert.deepEqual(signals[0]!.noteIds, [a.id, c.id]);
    assert.deepEqual(signals[0]!.detail, {
      target: 'Theory of Change',
      normalizedTarget: 'theory of change',
      sourceCount: 2,
    });
    assert.equal(signals[0]!.score, 0.6667);
  });

  it('near-miss: the missing note gets created later, and the signal is gone', () => {
    const b = new CorpusBuilder(2);
    b.add({ createdAt: AT, links: ['Reading list 2024'] });
    const before = detectDanglingLinks(b.notes);
    assert.equal(before.length, 1);
    b.add({ title: 'Reading List 2024', createdAt: new Date('2024-01-01T00:00:00Z') });
    assert.deepEqual(detectDanglingLinks(b.notes), []);
  });

  it('resolves links by id, by title with alias, heading, block or .md suffix', () => {
    const b = new CorpusBuilder(3);
    const target = b.add({ title: 'Garden Plan', createdAt: AT });
    b.add({
      createdAt: AT,
      links: [target.id, 'Garden Plan|the plan', 'garden plan#Beds', 'Garden Plan^b1', 'Garden Plan.md', '  '],
    });
    assert.deepEqual(detectDanglingLinks(b.notes), []);
  });

  it("resolves links by a note's aliases (a file name, front matter aliases)", () => {
    const notes = [
      {
        ...makeNote({ id: 'a', title: 'Weekly Review, 2024', createdAt: AT }),
        aliases: ['weekly-review.md', 'Review'],
      },
      makeNote({ id: 'b', createdAt: AT, links: ['weekly-review', 'review', 'Missing'] }),
    ];
    assert.deepEqual(
      detectDanglingLinks(notes).map((s) => s.detail.target),
      ['Missing'],
    );
  });

  it('keys by the normalised target, stable across spellings and input order', () => {
    const one = new CorpusBuilder(4);
    one.add({ createdAt: AT, links: ['Open Question'] });
    const two = new CorpusBuilder(4);
    two.add({ createdAt: AT, links: ['open   QUESTION'] });
    two.add({ createdAt: AT, links: ['Other'] });
    const keyOf = (notes: typeof one.notes) =>
      detectDanglingLinks(notes).find((s) => s.detail.normalizedTarget === 'open question')!.key;
    assert.equal(keyOf(one.notes), keyOf(two.notes));
    assert.equal(keyOf([...two.notes].reverse()), keyOf(two.notes));
  });
});

describe('normalizeLinkTarget', () => {
  it('strips brackets, alias, heading and .md, folds case and spaces', () => {
    assert.equal(normalizeLinkTarget('[[My  Note.md#Part|alias]]'), 'my note');
    assert.equal(normalizeLinkTarget(' Ünïcode '), 'ünïcode');
  });
});
