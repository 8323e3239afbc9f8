import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { base64Problem, decodeItemData } from './base64.js';

test('valid base64 passes, unbroken or wrapped, with any padding', () => {
  for (let length = 0; length < 40; length++) {
    const text = randomBytes(length).toString('base64');
    assert.equal(base64Problem(text), null, text);
    assert.equal(base64Problem(text.replace(/.{8}/g, '$&\r\n')), null, 'wrapped');
  }
});

test('each kind of corruption is named', () => {
  assert.match(base64Problem('QUJD*EFG')!, /unexpected character "\*" at position 4/);
  assert.match(base64Problem('QUJD\r\nQU*D\r\n')!, /unexpected character "\*" at position 8/);
  assert.match(base64Problem('QUI=\r\nQUJD')!, /data after the "=" padding at position 6/);
  assert.match(base64Problem('QUI=QUJD')!, /data after the "=" padding at position 4/);
  assert.match(base64Problem('QUJDR===')!, /more than two "=" padding/);
  assert.match(base64Problem('QUJDR')!, /not a whole number of bytes/);
  assert.match(base64Problem('QUJ==')!, /wrong amount of "=" padding/);
  assert.match(base64Problem('QUJDRA=')!, /wrong amount of "=" padding/);
});

test('item data decodes to its bytes, wrapped or not; corrupt data is refused, naming the problem', () => {
  for (let length = 0; length < 40; length++) {
    const bytes = randomBytes(length);
    const text = bytes.toString('base64');
    assert.deepEqual(decodeItemData(text), bytes);
    assert.deepEqual(decodeItemData(text.replace(/.{8}/g, '$&\r\n')), bytes, 'wrapped');
  }
  // Node's decoder would skip the '*' and the padding in the middle and answer other bytes.
  assert.throws(() => decodeItemData('QUJD*EFG'), /not valid base64: unexpected character "\*" at position 4/);
  assert.throws(() => decodeItemData('QUI=QUJD'), /not valid base64: data after the "=" padding/);
});
