import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemexError } from '@memex/contracts';
import { matches, parseRule, type RuleMessage } from './rules.js';

const message: RuleMessage = {
  account: 'gmail:owner@example.com',
  from: [{ name: 'Ann Lee', address: 'ann@vendor.example' }],
  to: [{ name: '', address: 'owner@example.com' }],
  cc: [{ name: 'Books', address: 'books@example.net' }],
  subject: 'Invoice 2024-117 for the e-mail plan',
  text: 'Please find the quarterly invoice attached.\nKind regards',
  date: '2024-03-05T10:00:00.000Z',
  labels: ['Vendors', 'INBOX'],
  read: false,
  starred: false,
  inbox: true,
};

const holds = (query: string) => matches(parseRule(query), message);

test('a rule is a query of the search language, judged on one message', () => {
  for (const query of [
    'invoice',
    'from:ann',
    'from:"Ann Lee"',
    'from:vendor.example to:owner@',
    'to:books@',
    'label:Vendors',
    'invoi*',
    '"quarterly invoice"',
    'e-mail',
    'kind:email source:gmail',
    'after:2024-03 before:2024-04',
    'invoice -lunch -"monthly invoice"',
    'from:bob from:ann',
  ]) {
    assert.equal(holds(query), true, query);
  }
  for (const query of [
    'lunch',
    'from:bob',
    'to:ann',
    'label:vendors',
    'label:Work',
    'invoice -quarterly',
    '"invoice quarterly"',
    'kind:note',
    'source:mbox',
    'before:2024-03-05',
    'after:2024-04',
  ]) {
    assert.equal(holds(query), false, query);
  }
});

test('a rule with no term, or a bad date, is an invalid_params error saying what is wrong', () => {
  assert.throws(
    () => parseRule(' "" '),
    (error: MemexError) => error.code === 'invalid_params' && /at least one term/.test(error.message),
  );
  assert.throws(
    () => parseRule('from:ann before:soon'),
    (error: MemexError) => error.code === 'invalid_params' && error.message.includes('before: "soon"'),
  );
});
