import { test } from 'node:test';
import assert from 'node:assert/strict';
import { phoneE164, readVCards } from './index.js';

test('a card’s phones carry their E.164 form (international anywhere, national read in the US), null when not a number', () => {
  const [card] = readVCards(
    [
      'BEGIN:VCARD',
      'VERSION:3.0',
      'FN:Ann Lee',
      'TEL;TYPE=CELL:+44 20 7946 0958',
      'TEL;TYPE=WORK:0049 30 901820',
      'TEL;TYPE=HOME:(212) 555-0142',
      'TEL:ext. 12',
      'END:VCARD',
      '',
    ].join('\r\n'),
  );
  assert.deepEqual(
    card!.phones.map((p) => [p.number, p.e164, p.types]),
    [
      ['+44 20 7946 0958', '+442079460958', ['cell']],
      ['0049 30 901820', '+4930901820', ['work']],
      ['(212) 555-0142', '+12125550142', ['home']],
      ['ext. 12', null, []],
    ],
  );
  assert.equal(phoneE164('030 901820', 'DE'), '+4930901820');
});
