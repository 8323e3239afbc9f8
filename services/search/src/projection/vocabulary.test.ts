import { test } from 'node:test';
import assert from 'node:assert/strict';
import { wordsOf } from './vocabulary.js';

const words = (text: string) => [...wordsOf(text)].sort();

test('words: lowercase runs of letters and digits of 2 to 40 characters, each once, ASCII or not', () => {
  assert.deepEqual(words('The Q3 budget: see budget-2024.xlsx, a b c!'), [
    '2024',
    'budget',
    'q3',
    'see',
    'the',
    'xlsx',
  ]);
  assert.deepEqual(words(`x ${'a'.repeat(40)} ${'b'.repeat(41)}`), ['a'.repeat(40)]);
  // One accented letter makes the text Unicode: the same runs, accents kept (the tsvector folds them).
  assert.deepEqual(words('Zoë MÜLLER met Zoe at the café.'), ['at', 'café', 'met', 'müller', 'the', 'zoe', 'zoë']);
  assert.deepEqual(words('山田太郎です、Ёлка! ５０'), ['ёлка', '山田太郎です', '５０']);
  // A letter beyond the BMP is one character: 40 of them are a word, 41 are not; a lone one is not.
  const astral = '𝒜';
  assert.deepEqual(words(`${astral.repeat(40)} ${astral.repeat(41)} ${astral} ok`), ['ok', astral.repeat(40)]);
  assert.deepEqual(words(''), []);
});
