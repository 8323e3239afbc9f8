import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  evaluateInference,
  formatCitation,
  InferenceValidationError,
  mintInference,
  remintInference,
  renderInference,
  type Inference,
  type MintInput,
} from './inference.js';
import { CorpusBuilder } from './synthetic.js';

const MINTED = new Date('2024-06-01T12:00:00Z');

/** Three notes as the store holds them: id → current content hash. */
function store() {
  const b = new CorpusBuilder(1, 8, '');
  for (let i = 0; i < 3; i++) b.add({ createdAt: MINTED, body: `body ${i}` });
  const hashes = new Map(b.notes.map((n) => [n.id, n.contentHash]));
  const input: MintInput = {
    title: 'Evenings are when the writing happens',
    summary: 'Every note about finishing a chapter was written after 21:00.\nNone of them says so.',
    confidence: 0.78,
    modelId: 'claude-test',
    sources: b.notes.slice(0, 2).map((n) => ({ noteId: n.id, contentHash: n.contentHash })),
    signalKey: 'hidden_arc:abc',
  };
  const inference: Inference = { ...mintInference(input, MINTED), id: 42 };
  return { b, hashes, input, inference };
}

describe('mintInference', () => {
  it('keeps the claim, confidence, model and a content-hash snapshot of every source', () => {
    const { inference, b } = store();
    assert.equal(inference.revision, 1);
    assert.equal(inference.signalKey, 'hidden_arc:abc');
    assert.deepEqual(inference.sources, [
      { noteId: '1', contentHash: b.notes[0]!.contentHash },
      { noteId: '2', contentHash: b.notes[1]!.contentHash },
    ]);
  });

  it('rejects invalid input, naming the field', () => {
    const { input } = store();
    const bad: [Partial<MintInput>, RegExp][] = [
      [{ confidence: 1.2 }, /confidence must be a number in \[0, 1\], got 1.2/],
      [{ confidence: Number.NaN }, /confidence/],
      [{ title: '  ' }, /title must be non-empty/],
      [{ modelId: '' }, /modelId must be non-empty/],
      [{ sources: [] }, /at least one source/],
      [{ sources: [{ noteId: '1', contentHash: '' }] }, /sources\[0\] \(note 1\) has no content hash/],
      [{ sources: [...input.sources, input.sources[0]!] }, /note 1 is cited twice/],
    ];
    for (const [patch, message] of bad) {
      assert.throws(
        () => mintInference({ ...input, ...patch }, MINTED),
        (e: unknown) => e instanceof InferenceValidationError && message.test(e.message),
        JSON.stringify(patch),
      );
    }
    assert.equal(mintInference({ ...input, confidence: 0 }, MINTED).confidence, 0);
    assert.equal(mintInference({ ...input, confidence: 1 }, MINTED).confidence, 1);
  });
});

describe('evaluateInference (invalidation on read)', () => {
  it('is active while every source hashes as at mint time', () => {
    const { inference, hashes } = store();
    const e = evaluateInference(inference, hashes);
    assert.equal(e.status, 'active');
    assert.deepEqual(
      e.sources.map((s) => s.mark),
      [' ', ' '],
    );
  });

  it('edit a source → stale, with ~ beside it', () => {
    const { inference, hashes } = store();
    hashes.set('2', 'edited');
    const e = evaluateInference(inference, hashes);
    assert.equal(e.status, 'stale');
    assert.deepEqual(
      e.sources.map((s) => [s.noteId, s.mark, s.currentHash]),
      [
        ['1', ' ', hashes.get('1')],
        ['2', '~', 'edited'],
      ],
    );
  });

  it('delete a source → orphaned with ✗, its evidence row kept; orphaned outranks stale', () => {
    const { inference, hashes } = store();
    hashes.set('1', 'edited');
    hashes.delete('2');
    const e = evaluateInference(inference, hashes);
    assert.equal(e.status, 'orphaned');
    assert.deepEqual(
      e.sources.map((s) => s.mark),
      ['~', '✗'],
    );
    assert.equal(e.sources[1]!.snapshotHash, inference.sources[1]!.contentHash);
    assert.equal(e.sources[1]!.currentHash, null);
    hashes.set('2', undefined as unknown as string);
    assert.equal(evaluateInference(inference, hashes).status, 'orphaned', 'an undefined hash means deleted too');
  });

  it('re-mint → active again, same id, next revision', () => {
    const { inference, hashes, input } = store();
    hashes.set('1', 'edited');
    hashes.delete('2');
    const sources = [...hashes].map(([noteId, contentHash]) => ({ noteId, contentHash: contentHash! }));
    const reminted = remintInference(
      inference,
      { ...input, sources, confidence: 0.6 },
      new Date('2024-07-01T00:00:00Z'),
    );
    assert.deepEqual([reminted.id, reminted.revision, reminted.confidence], [42, 2, 0.6]);
    assert.equal(evaluateInference(reminted, hashes).status, 'active');
  });
});

describe('formatCitation and renderInference', () => {
  it('cites as a hypothesis: [Inference #42, conf 0.78, from notes #1, #2]', () => {
    const { inference } = store();
    assert.equal(formatCitation(inference), '[Inference #42, conf 0.78, from notes #1, #2]');
    assert.equal(formatCitation({ ...inference, confidence: 0.5 }), '[Inference #42, conf 0.50, from notes #1, #2]');
  });

  it('marks changed and deleted sources and flags the citation', () => {
    const { inference, hashes } = store();
    hashes.set('1', 'edited');
    assert.equal(
      formatCitation(inference, evaluateInference(inference, hashes)),
      '[Inference #42, conf 0.78, from notes ~#1, #2] [!] STALE',
    );
    hashes.delete('2');
    assert.equal(
      formatCitation(inference, evaluateInference(inference, hashes)),
      '[Inference #42, conf 0.78, from notes ~#1, ✗#2] [!] STALE · ORPHANED',
    );
  });

  it('renders [!] STALE with ~ and ✗ beside the offending sources', () => {
    const { inference, hashes } = store();
    assert.equal(
      renderInference(inference, evaluateInference(inference, hashes)),
      [
        'Inference #42: Evenings are when the writing happens',
        'conf 0.78 · model claude-test · minted 2024-06-01T12:00:00.000Z · revision 1',
        '  Every note about finishing a chapter was written after 21:00.',
        '  None of them says so.',
        'sources:',
        '    #1',
        '    #2',
      ].join('\n'),
    );
    hashes.set('1', 'edited');
    const stale = renderInference(inference, evaluateInference(inference, hashes));
    assert.match(stale, /^\[!\] STALE {2}Inference #42: /);
    assert.match(stale, /\n {2}~ #1 {2}changed since mint\n/);
    hashes.delete('2');
    const orphaned = renderInference(inference, evaluateInference(inference, hashes));
    assert.match(orphaned, /^\[!\] STALE · ORPHANED {2}Inference #42/);
    assert.match(
      orphaned,
      new RegExp(
        `\\n {2}✗ #2 {2}deleted \\(evidence kept: hash ${inference.sources[1]!.contentHash.slice(0, 12)} at mint\\)$`,
      ),
    );
  });
});
