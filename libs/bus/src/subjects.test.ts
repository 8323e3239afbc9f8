import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventSubject, typeOfSubject } from './subjects.js';

test("an event's type is read back from its subject, whatever its aggregate's token", () => {
  assert.equal(typeOfSubject(eventSubject('item.ingested', 'item:01JABCDEF')), 'item.ingested');
  // An aggregate that is no safe token (dots, @) is hashed into one token.
  assert.equal(typeOfSubject(eventSubject('mail.flags_changed', 'person:ann@example.com')), 'mail.flags_changed');
});
