import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { message } from './testing/build.js';
import { parseEmail } from './testing/parse.js';
import { writtenDate } from './dates.js';

describe('dates as mail and documents write them', () => {
  // A host far from UTC: a date read in the host's zone would come out five hours off here.
  const zone = process.env.TZ;
  process.env.TZ = 'America/New_York';
  after(() => {
    if (zone === undefined) delete process.env.TZ;
    else process.env.TZ = zone;
  });

  it('reads RFC 5322 dates, their obsolete forms and comments', () => {
    assert.equal(writtenDate('Tue, 04 Jun 2024 09:30:00 +0200'), '2024-06-04T07:30:00.000Z');
    assert.equal(writtenDate('Tue, 4 Jun 2024 09:30:00 +0200 (W. Europe Daylight Time)'), '2024-06-04T07:30:00.000Z');
    // Two dates in one field (the Enron PSTs' transport headers): the first.
    assert.equal(
      writtenDate('Mon, 22 Oct 2001 13:06:22 -0700 (PDT) Mon, 22 Oct 2001 13:06:22 -0500'),
      '2001-10-22T20:06:22.000Z',
    );
    assert.equal(writtenDate('Mon, 3 Jan 00 10:00:00 GMT'), '2000-01-03T10:00:00.000Z');
    assert.equal(writtenDate('Fri, 12 Mar 99 23:01:02 EST'), '1999-03-13T04:01:02.000Z');
    assert.equal(writtenDate('Sat, 13 Feb 2010 2:5:7 -0800'), '2010-02-13T10:05:07.000Z');
    assert.equal(writtenDate('2024-06-04'), '2024-06-04T00:00:00.000Z');
    // RFC 5322's A.6.3 example: comments and space inside the time.
    assert.equal(writtenDate('Fri, 21 Nov 1997 09(comment):   55  :  06 -0600'), '1997-11-21T15:55:06.000Z');
  });

  it("European mailers' day.month.year and dotted times", () => {
    assert.equal(writtenDate('01.06.2009 10:00'), '2009-06-01T10:00:00.000Z');
    assert.equal(writtenDate('Mo, 1.6.2009 10:00:00 +0200'), '2009-06-01T08:00:00.000Z');
    assert.equal(writtenDate('Mon, 01 Jun 2009 10.00.00 +0200'), '2009-06-01T08:00:00.000Z');
    assert.equal(writtenDate('13.12.2009 23.59'), '2009-12-13T23:59:00.000Z');
  });

  it('zone names mail clients wrote instead of an offset', () => {
    assert.equal(writtenDate('Wed, 6 Sep 2006 15:22:01 CEST'), '2006-09-06T13:22:01.000Z');
    assert.equal(writtenDate('Di, 4 Jun 2024 09:30:00 MESZ'), '2024-06-04T07:30:00.000Z');
    assert.equal(writtenDate('Thu, 1 Feb 2001 09:00:00 JST'), '2001-02-01T00:00:00.000Z');
    assert.equal(writtenDate('Tue, 4 Jun 2024 09:30:00 +0200 CEST'), '2024-06-04T07:30:00.000Z', 'the offset wins');
    // A name that could be several zones (India, Ireland, Israel) is an unknown zone: -0000.
    assert.equal(writtenDate('Tue, 4 Jun 2024 09:30:00 IST'), '2024-06-04T09:30:00.000Z');
    assert.equal(writtenDate('4 Jun 2024 09:30:00 A'), '2024-06-04T09:30:00.000Z');
  });

  it('a date without a zone is read as UTC, whatever the zone of the machine reading it', () => {
    assert.equal(writtenDate('Mon Jan  3 10:00:00 2000'), '2000-01-03T10:00:00.000Z');
    assert.equal(writtenDate('2006-09-06 15:22:01'), '2006-09-06T15:22:01.000Z');
    assert.equal(writtenDate('Tue, 4 Jun 2024 09:30:00'), '2024-06-04T09:30:00.000Z');
  });

  it('what cannot be read is null, and the message says why it is dated otherwise', async () => {
    assert.equal(writtenDate('next Tuesday'), null);
    assert.equal(writtenDate('  '), null);
    const item = await parseEmail(
      message([
        ['From', 'a@example.org'],
        ['Subject', 'x'],
        ['Date', 'Tue, 04 Jun 2024 09h30 +0200'],
      ]),
      { received: '2024-06-05T08:00:00Z' },
    );
    assert.equal(item.occurredAt, '2024-06-05T08:00:00.000Z');
    assert.ok(
      item.warnings.includes(
        'the Date header ("Tue, 04 Jun 2024 09h30 +0200") cannot be read: dated by when it was received',
      ),
      item.warnings.join('\n'),
    );
  });
});
