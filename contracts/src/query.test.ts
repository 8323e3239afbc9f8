import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemexError } from './errors.js';
import { formatQuery, meaningText, parseDate, parseQuery } from './query.js';

describe('parseQuery', () => {
  test('words, phrases, exclusions, prefixes and filters', () => {
    const parsed = parseQuery(
      'Budget "quarterly review" -draft -"old plan" invoi* from:ann to:"Bob Lee" kind:email before:2021-03 after:2020 label:work source:mbox author:"Shen" object:dog tag:beach',
    );
    assert.deepEqual(parsed.words, ['budget']);
    assert.deepEqual(parsed.phrases, ['quarterly review']);
    assert.deepEqual(parsed.excluded, ['draft', 'old plan']);
    assert.deepEqual(parsed.prefixes, ['invoi']);
    assert.deepEqual(parsed.filters, {
      from: ['ann'],
      to: ['Bob Lee'],
      kind: ['email'],
      before: ['2021-03'],
      after: ['2020'],
      label: ['work'],
      source: ['mbox'],
      author: ['Shen'],
      object: ['dog'],
      tag: ['beach'],
    });
    assert.equal(meaningText(parsed), 'budget invoi quarterly review');
  });

  test('punctuation around words goes, inside words stays; unknown fields stay text', () => {
    const parsed = parseQuery('(budget), e-mail re:meeting 3.5% "single"');
    assert.deepEqual(parsed.words, ['budget', 'e-mail', 're:meeting', '3.5', 'single']);
    assert.deepEqual(parsed.phrases, []);
  });

  test('formatQuery writes a parsed query back so it parses the same', () => {
    const parsed = parseQuery('Budget "quarterly review" -draft -"old plan" invoi* from:ann to:"Bob Lee" label:work');
    assert.deepEqual(parseQuery(formatQuery(parsed)), parsed);
    const withoutLabel = formatQuery({ ...parsed, filters: { ...parsed.filters, label: [] } });
    assert.equal(withoutLabel, 'budget invoi* "quarterly review" -draft -"old plan" from:ann to:"Bob Lee"');
  });

  test('an unclosed quote runs to the end; empty pieces are ignored', () => {
    assert.deepEqual(parseQuery('"half open phrase').phrases, ['half open phrase']);
    const empty = parseQuery(' "" - * from: ');
    assert.deepEqual([empty.words, empty.phrases, empty.excluded, empty.prefixes], [['from'], [], [], []]);
  });
});

describe('parseDate', () => {
  test('years, months, days and ISO date-times, in UTC', () => {
    assert.equal(parseDate('2020', 'after').toISOString(), '2020-01-01T00:00:00.000Z');
    assert.equal(parseDate('2021-03', 'before').toISOString(), '2021-03-01T00:00:00.000Z');
    assert.equal(parseDate('2021/3/9', 'before').toISOString(), '2021-03-09T00:00:00.000Z');
    assert.equal(parseDate('2021-03-09T10:00:00Z', 'before').toISOString(), '2021-03-09T10:00:00.000Z');
  });

  test('a bad date is an invalid_params error naming the filter', () => {
    for (const bad of ['yesterday', '2021-13', '2021-02-30']) {
      assert.throws(
        () => parseDate(bad, 'before'),
        (error: MemexError) => error.code === 'invalid_params' && error.message.includes(`before: "${bad}"`),
      );
    }
  });
});
