import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  addressesIn,
  arxivIdsIn,
  datesIn,
  doisIn,
  isbnsIn,
  mentionsIn,
  moneyIn,
  phonesIn,
  urlsIn,
} from './mentions.js';
import type { Mention } from '@memex/contracts';

/** Written on a Thursday: "Friday" is the next day. */
const REFERENCE = new Date('2025-02-27T10:00:00Z');

/** [text, value] of each mention, after checking that its span is exactly its text. */
function found(text: string, mentions: Mention[]): Array<[string, string]> {
  for (const m of mentions) assert.equal(text.slice(m.start, m.end), m.text, `span of ${m.kind} "${m.text}"`);
  return mentions.map((m) => [m.text, m.value]);
}

describe('tier-0 extractors', () => {
  test('dates: English formats and relative days, and the common forms of other languages', () => {
    const text = [
      'Kickoff is March 3, 2025 at 3pm, the review on 2025-04-01 and the party on 14/02/2025.',
      "I'll send the draft by Friday; the report is due next Monday.",
      'Der Termin ist am 12. März 2025. La réunion est le 5 avril 2025. La reunión es el 7 de mayo de 2025.',
      'Meet at 10:30 CET on 1 Dec 2025.',
    ].join('\n');
    const values = Object.fromEntries(found(text, datesIn(text, REFERENCE)));
    assert.equal(values['March 3, 2025 at 3pm'], '2025-03-03T15:00');
    assert.equal(values['2025-04-01'], '2025-04-01');
    assert.equal(values['14/02/2025'], '2025-02-14');
    assert.equal(values['Friday'], '2025-02-28');
    assert.equal(values['next Monday'], '2025-03-03');
    assert.ok(Object.entries(values).some(([t, v]) => t.includes('12. März 2025') && v === '2025-03-12'));
    assert.equal(values['5 avril 2025'], '2025-04-05');
    assert.ok(Object.entries(values).some(([t, v]) => t.includes('7 de mayo de 2025') && v === '2025-05-07'));
    // The zone is kept when the text gives one, and never made up when it does not.
    assert.ok(Object.entries(values).some(([t, v]) => t.includes('10:30 CET') && /^2025-12-01T10:30\+01:00$/.test(v)));
  });

  test("dates: another language's forms are read where the text has its calendar's words or shapes, and only there", () => {
    const dates = (text: string) =>
      found(
        text,
        mentionsIn(text, REFERENCE).filter((m) => m.kind === 'date'),
      );
    // A day written "5." before a month spelt as in English, a French time, a German relative day.
    assert.deepEqual(dates('Am 5. Sep 2025 um 15 Uhr'), [['5. Sep 2025 um 15 Uhr', '2025-09-05T15:00']]);
    assert.deepEqual(dates('Rendez-vous à 15h30.'), [['à 15h30', '2025-02-27T15:30']]);
    assert.deepEqual(dates('Wir sehen uns in 5 Tagen.'), [['in 5 Tagen', '2025-03-04']]);
    // English text is not read by the other languages' time parsers: a paper size is no time of day.
    assert.deepEqual(dates('Please print it on A4 paper, 2 copies.'), []);
    assert.deepEqual(dates('Meet on 3/6/2025 at 10:30.'), [['3/6/2025 at 10:30', '2025-03-06T10:30']]);
  });

  test('money: symbols before and codes after, thousands separators of both conventions, scales', () => {
    const text = "Total $1,250.00, or € 3.400,50 in Berlin, £80, CHF 1'200, 1.5 million USD, 300 euros and US$ 99.";
    assert.deepEqual(
      found(text, moneyIn(text)).sort(),
      [
        ['$1,250.00', 'USD 1250'],
        ['1.5 million USD', 'USD 1500000'],
        ['300 euros', 'EUR 300'],
        ["CHF 1'200", 'CHF 1200'],
        ['US$ 99', 'USD 99'],
        ['£80', 'GBP 80'],
        ['€ 3.400,50', 'EUR 3400.5'],
      ].sort(),
    );
  });

  test('URLs: sentence punctuation and an unmatched bracket are cut, balanced brackets kept', () => {
    const text =
      'See https://en.wikipedia.org/wiki/Ada_(programming_language). Or (www.example.org/a?b=1), and http://x.example/p, too.';
    assert.deepEqual(found(text, urlsIn(text)), [
      [
        'https://en.wikipedia.org/wiki/Ada_(programming_language)',
        'https://en.wikipedia.org/wiki/Ada_(programming_language)',
      ],
      ['www.example.org/a?b=1', 'www.example.org/a?b=1'],
      ['http://x.example/p', 'http://x.example/p'],
    ]);
  });

  test('phones: international numbers in several conventions, national ones in the default region, no dates or ids', () => {
    const text =
      'Call +44 20 7946 0958, +49 30 901820, 0033 1 42 68 53 00 or (650) 253-0000. Order 2025-04-01, invoice 12345678.';
    assert.deepEqual(
      found(text, phonesIn(text)).map(([, v]) => v),
      ['+442079460958', '+4930901820', '+33142685300', '+16502530000'],
    );
  });

  test('DOIs with odd characters (SICI parentheses and angle brackets), case folded, trailing period cut', () => {
    const text =
      'doi:10.1002/(SICI)1097-4571(199806)49:8<693::AID-ASI4>3.0.CO;2-0. See also https://doi.org/10.1038/nphys1170 and (10.1145/3386569.3392408).';
    assert.deepEqual(found(text, doisIn(text)), [
      [
        '10.1002/(SICI)1097-4571(199806)49:8<693::AID-ASI4>3.0.CO;2-0',
        '10.1002/(sici)1097-4571(199806)49:8<693::aid-asi4>3.0.co;2-0',
      ],
      ['10.1038/nphys1170', '10.1038/nphys1170'],
      ['10.1145/3386569.3392408', '10.1145/3386569.3392408'],
    ]);
  });

  test('arXiv ids: new style with version, old style, abs URLs; a bare decimal is not one', () => {
    const text =
      'arXiv:2101.00001v2, arXiv: hep-th/9901001, https://arxiv.org/abs/1706.03762 and the ratio 1706.03762.';
    assert.deepEqual(
      found(text, arxivIdsIn(text)).map(([t]) => t),
      ['2101.00001v2', 'hep-th/9901001', '1706.03762'],
    );
  });

  test('ISBNs: -10 and -13 with valid check digits, as 13 digits; a wrong check digit or a phone is not one', () => {
    const text =
      'ISBN 0-306-40615-2, ISBN-13: 978-0-306-40615-7, also 978-3-16-148410-0; not ISBN 0-306-40615-3 nor 650-253-0000.';
    assert.deepEqual(found(text, isbnsIn(text)), [
      ['0-306-40615-2', '9780306406157'],
      ['978-0-306-40615-7', '9780306406157'],
      ['978-3-16-148410-0', '9783161484100'],
    ]);
  });

  test('addresses: US, continental and UK shapes', () => {
    const text =
      'Ship to 1600 Amphitheatre Parkway, Mountain View, CA 94043 or to Unter den Linden 77, 10117 Berlin. The office is 10 Downing Street, London SW1A 2AA.';
    assert.deepEqual(
      found(text, addressesIn(text)).map(([t]) => t),
      [
        '1600 Amphitheatre Parkway, Mountain View, CA 94043',
        'Unter den Linden 77, 10117 Berlin',
        '10 Downing Street, London SW1A 2AA',
      ],
    );
  });

  test('mentionsIn: in text order; overlapping readings of one kind are one mention', () => {
    const text = 'On 2025-04-01 pay €20 at https://pay.example/x.';
    const mentions = mentionsIn(text, REFERENCE);
    assert.deepEqual(
      mentions.map((m) => m.kind),
      ['date', 'money', 'url'],
    );
  });
});
