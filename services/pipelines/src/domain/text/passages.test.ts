import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { splitPassages } from './passages.js';

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

/** Distinct numbered sentences, so coverage can be checked sentence by sentence. */
function sentencesText(count: number, wordsEach = 12): string[] {
  return Array.from({ length: count }, (_, i) => `Sentence ${i} ${'word '.repeat(wordsEach - 3)}end${i}.`);
}

describe('splitPassages', () => {
  test('a short text is one passage, trimmed, with its offsets', () => {
    const text = '\n  Lunch moved to Thursday. Bring the slides!  \n';
    const passages = splitPassages(text);
    assert.equal(passages.length, 1);
    const [p] = passages;
    assert.equal(p!.text, 'Lunch moved to Thursday. Bring the slides!');
    assert.equal(text.slice(p!.start, p!.end), p!.text);
    assert.deepEqual([p!.ordinal, p!.kind, p!.page], [0, 'passage', undefined]);
  });

  test('empty and blank texts have no passages', () => {
    assert.deepEqual(splitPassages(''), []);
    assert.deepEqual(splitPassages(' \n\n \t'), []);
  });

  test('long prose: 150–300 words each, ending at sentence ends, overlapping, covering every sentence', () => {
    const all = sentencesText(120);
    const text = all.join(' ');
    const passages = splitPassages(text);
    assert.ok(passages.length >= 5 && passages.length <= 12, `${passages.length} passages`);
    passages.forEach((p, i) => {
      assert.equal(p.ordinal, i);
      assert.equal(text.slice(p.start, p.end), p.text);
      assert.ok(words(p.text) <= 300, `passage ${i} has ${words(p.text)} words`);
      if (i < passages.length - 1) assert.ok(words(p.text) >= 150, `passage ${i} has ${words(p.text)} words`);
      assert.match(p.text, /end\d+\.$/, 'ends at a sentence end');
      assert.match(p.text, /^Sentence \d+/, 'starts at a sentence start');
    });
    for (let i = 1; i < passages.length; i++) {
      assert.ok(passages[i]!.start < passages[i - 1]!.end, `passage ${i} overlaps the one before`);
      assert.ok(passages[i]!.start > passages[i - 1]!.start);
    }
    for (const sentence of all)
      assert.ok(
        passages.some((p) => p.text.includes(sentence)),
        `"${sentence.slice(0, 12)}" is covered`,
      );
  });

  test('a paragraph break past the minimum closes a passage there', () => {
    const first = sentencesText(14).join(' '); // 168 words
    const second = sentencesText(10)
      .map((s) => s.replace('Sentence', 'Other'))
      .join(' ');
    const text = `${first}\n\n${second}`;
    const passages = splitPassages(text);
    assert.equal(passages.length, 2);
    assert.equal(passages[0]!.text, first);
    assert.ok(passages[1]!.text.endsWith(second));
  });

  test('a run-on text without punctuation is cut at word boundaries under the maximum', () => {
    const text = Array.from({ length: 700 }, (_, i) => `w${i}`).join(' ');
    const passages = splitPassages(text);
    assert.ok(passages.length >= 3);
    for (const p of passages) {
      assert.ok(words(p.text) <= 300);
      assert.match(p.text, /^w\d+ .* w\d+$/);
    }
    assert.ok(passages.at(-1)!.text.endsWith('w699'));
  });

  test('list items and lines stay whole; a tiny tail joins the passage before it', () => {
    const body = sentencesText(16).join(' ');
    const text = `${body}\n- buy milk\n- call Ann`;
    const passages = splitPassages(text);
    assert.equal(passages.length, 1);
    assert.ok(passages[0]!.text.endsWith('- call Ann'));
  });

  test('PDF pages: passages stay within a page and carry its number', () => {
    const texts = [sentencesText(30).join(' '), '', 'The appendix lists every sample. It is short.'];
    const text = texts.filter(Boolean).join('\n\n');
    // As the document handler writes them: each page's range of the text (an empty page is empty).
    const pages = [
      { page: 1, start: 0, end: texts[0]!.length },
      { page: 2, start: texts[0]!.length + 2, end: texts[0]!.length + 2 },
      { page: 3, start: texts[0]!.length + 2, end: text.length },
    ];
    const passages = splitPassages(text, pages);
    assert.deepEqual([...new Set(passages.map((p) => p.page))], [1, 3]);
    const last = passages.at(-1)!;
    assert.equal(last.text, 'The appendix lists every sample. It is short.');
    assert.equal(last.page, 3);
    for (const p of passages) assert.equal(text.slice(p.start, p.end), p.text);
    // Pages that do not fit the text are ignored rather than trusted.
    assert.equal(splitPassages('other text', pages)[0]!.page, undefined);
  });
});
