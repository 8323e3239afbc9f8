import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRandom } from '@memex/testing';
import { snippetOf } from './message-row.js';

test('a snippet read from the head of a long text is the one the whole text gives', () => {
  // What a snippet is: the text with its whitespace collapsed, cut at 200 characters.
  const whole = (text: string) => {
    const flat = text.replace(/\s+/g, ' ').trim();
    return flat.length > 200 ? `${flat.slice(0, 199)}…` : flat;
  };
  const random = seededRandom(3);
  const pieces = ['a', 'b', ' ', '\n', '\t', '\r\n', '      ', '\u00a0', 'é', '😀'];
  for (let i = 0; i < 20_000; i++) {
    // Texts around the head's length, some mostly whitespace (a long run across the cut).
    const blank = random();
    let text = '';
    for (let n = Math.floor(random() * 1200); n > 0; n--)
      text += random() < blank ? pieces[2 + Math.floor(random() * 5)] : pieces[Math.floor(random() * pieces.length)];
    assert.equal(snippetOf(text), whole(text), JSON.stringify(text));
  }
});
