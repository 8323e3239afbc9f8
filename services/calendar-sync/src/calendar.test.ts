import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { CalendarBrief, CalendarFreebusy, CalendarList, Ingest, ItemsDelete, type ResultOf } from '@memex/contracts';
import { sql, type Kysely } from 'kysely';
import { createDatabase } from '@memex/db';
import { DATABASE, HandlerProjection, ProjectionRunner, ServiceHost } from '@memex/runtime';
import { sharedFile, sharedSkip } from '@memex/testing';
import { CalendarProjector } from './projection/calendar.projector.js';
import type { CalendarDatabase } from './projection/schema.js';
import { startCalendar, type CalendarHarness } from './testing/harness.js';
import { ics, invitationMail } from './testing/generate.js';

type Instances = ResultOf<typeof CalendarList>['instances'];

/**
 * A weekly Monday 09:00 Berlin meeting from 2026-03-16 for 6 weeks, across the change to summer
 * time on Sunday 2026-03-29: 08:00Z before, 07:00Z after. The 2026-03-23 instance moved to
 * Tuesday 14:00, the 2026-04-06 one cancelled, 2026-04-13 an EXDATE.
 */
const SERIES = ics('PUBLISH', [
  [
    'UID:weekly-sync@example.com',
    'SEQUENCE:0',
    'DTSTART;TZID=Europe/Berlin:20260316T090000',
    'DTEND;TZID=Europe/Berlin:20260316T100000',
    'RRULE:FREQ=WEEKLY;COUNT=6',
    'EXDATE;TZID=Europe/Berlin:20260413T090000',
    'SUMMARY:Weekly sync',
    'LOCATION:Room 1',
    'ORGANIZER;CN=Ada:mailto:ada@example.com',
    'ATTENDEE;CN=Bob;PARTSTAT=NEEDS-ACTION:mailto:bob@example.com',
  ],
  [
    'UID:weekly-sync@example.com',
    'RECURRENCE-ID;TZID=Europe/Berlin:20260323T090000',
    'SEQUENCE:1',
    'DTSTART;TZID=Europe/Berlin:20260324T140000',
    'DTEND;TZID=Europe/Berlin:20260324T150000',
    'SUMMARY:Weekly sync (moved)',
  ],
  [
    'UID:weekly-sync@example.com',
    'RECURRENCE-ID;TZID=Europe/Berlin:20260406T090000',
    'SEQUENCE:1',
    'STATUS:CANCELLED',
    'DTSTART;TZID=Europe/Berlin:20260406T090000',
    'DTEND;TZID=Europe/Berlin:20260406T100000',
    'SUMMARY:Weekly sync',
  ],
]);

const REVIEW = [
  'UID:review-42@example.com',
  'DTSTART;TZID=Europe/Paris:20260318T100000',
  'DTEND;TZID=Europe/Paris:20260318T110000',
  'SUMMARY:Quarterly review',
  'ORGANIZER;CN=Ada Lovelace:mailto:ada@example.com',
  'ATTENDEE;CN=Bob;PARTSTAT=NEEDS-ACTION:mailto:bob@example.com',
  'ATTENDEE;CN=Carol;PARTSTAT=NEEDS-ACTION:mailto:carol@example.com',
];

describe('calendar-sync: calendar files and invitations', () => {
  let h: CalendarHarness;
  let seq = 0;
  before(async () => {
    h = await startCalendar();
  });
  after(async () => {
    await h?.stop();
  });

  async function ingest(type: string, data: string | Buffer, externalId: string): Promise<string> {
    const result = await h.call(Ingest, {
      items: [{ type, data: Buffer.from(data).toString('base64'), source: { kind: 'test' }, external_id: externalId }],
    });
    const [item] = result.results;
    assert.ok(item && item.status !== 'rejected', `rejected: ${item?.reason}`);
    seq = result.seq;
    return item.id!;
  }

  const list = async (from: string, to: string): Promise<Instances> =>
    (await h.call(CalendarList, { from, to, min_seq: seq })).instances;

  it('places a recurring series across a DST change, with its moved, cancelled and excluded instances', async () => {
    await ingest('text/calendar', SERIES, 'series.ics');
    const instances = await list('2026-03-01T00:00:00Z', '2026-05-01T00:00:00Z');
    assert.deepEqual(
      instances.map((i) => [i.start, i.end, i.summary, i.recurrence_id, i.modified]),
      [
        ['2026-03-16T08:00:00.000Z', '2026-03-16T09:00:00.000Z', 'Weekly sync', '2026-03-16T08:00:00.000Z', false],
        [
          '2026-03-24T13:00:00.000Z',
          '2026-03-24T14:00:00.000Z',
          'Weekly sync (moved)',
          '2026-03-23T08:00:00.000Z',
          true,
        ],
        ['2026-03-30T07:00:00.000Z', '2026-03-30T08:00:00.000Z', 'Weekly sync', '2026-03-30T07:00:00.000Z', false],
        ['2026-04-20T07:00:00.000Z', '2026-04-20T08:00:00.000Z', 'Weekly sync', '2026-04-20T07:00:00.000Z', false],
      ],
    );
    assert.ok(instances.every((i) => i.time_zone === 'Europe/Berlin' && i.recurring));
  });

  it('matches an invitation in a mail to the same event in a calendar file by UID, and a REPLY updates the attendee', async () => {
    const invite = await ingest('message/rfc822', invitationMail('REQUEST', REVIEW, 'invite-1'), 'invite-1');
    let [review] = (await list('2026-03-18T00:00:00Z', '2026-03-19T00:00:00Z')).filter(
      (i) => i.uid === 'review-42@example.com',
    );
    assert.ok(review, 'the invitation shows in the calendar');
    assert.equal(review.start, '2026-03-18T09:00:00.000Z');
    assert.equal(review.items.length, 1);
    assert.notEqual(review.items[0], invite, 'the calendar part (a child of the mail) is the item');

    const file = await ingest('text/calendar', ics('PUBLISH', [REVIEW]), 'review.ics');
    const both = (await list('2026-03-18T00:00:00Z', '2026-03-19T00:00:00Z')).filter(
      (i) => i.uid === 'review-42@example.com',
    );
    assert.equal(both.length, 1, 'one event, not two');
    assert.ok(both[0]!.items.includes(file) && both[0]!.items.length === 2, 'shown from both places');

    await ingest(
      'message/rfc822',
      invitationMail(
        'REPLY',
        [
          'UID:review-42@example.com',
          'DTSTART;TZID=Europe/Paris:20260318T100000',
          'ATTENDEE;CN=Bob;PARTSTAT=ACCEPTED:mailto:bob@example.com',
        ],
        'reply-1',
      ),
      'reply-1',
    );
    [review] = (await list('2026-03-18T00:00:00Z', '2026-03-19T00:00:00Z')).filter(
      (i) => i.uid === 'review-42@example.com',
    );
    assert.deepEqual(
      review?.attendees.map((a) => [a.address, a.status]),
      [
        ['bob@example.com', 'accepted'],
        ['carol@example.com', 'needs-action'],
      ],
    );
    assert.equal(review?.summary, 'Quarterly review', 'a reply changes only the answer');
  });

  it('gives merged busy time for a week, without cancelled instances', async () => {
    const { busy } = await h.call(CalendarFreebusy, {
      from: '2026-03-16T00:00:00Z',
      to: '2026-03-23T00:00:00Z',
      min_seq: seq,
    });
    assert.deepEqual(busy, [
      { start: '2026-03-16T08:00:00.000Z', end: '2026-03-16T09:00:00.000Z' },
      { start: '2026-03-18T09:00:00.000Z', end: '2026-03-18T10:00:00.000Z' },
    ]);
  });

  it('briefs a meeting from the graph: its attendees and what is known about them, within the budget', async () => {
    const { brief, attendees, summary } = await h.call(CalendarBrief, {
      uid: 'review-42@example.com',
      budget_bytes: 2048,
      min_seq: seq,
    });
    assert.equal(summary, 'Quarterly review');
    assert.equal(attendees.length, 2);
    const things = brief.things.map((t) => t.key).sort();
    // The graph knows the meeting and its people from the invitation and the calendar file.
    assert.ok(things.includes('event:review-42@example.com'), things.join(', '));
    assert.ok(
      ['person:ada@example.com', 'person:bob@example.com', 'person:carol@example.com'].every((k) => things.includes(k)),
      things.join(', '),
    );
    assert.ok(brief.bytes <= 2048);
    await assert.rejects(h.call(CalendarBrief, { uid: 'nothing@example.com' }), /no event "nothing@example.com"/);
  });

  it('drops an event when a CANCEL with a later sequence arrives', async () => {
    await ingest(
      'message/rfc822',
      invitationMail(
        'CANCEL',
        ['UID:review-42@example.com', 'SEQUENCE:2', 'DTSTART;TZID=Europe/Paris:20260318T100000', 'STATUS:CANCELLED'],
        'cancel-1',
      ),
      'cancel-1',
    );
    const left = (await list('2026-03-18T00:00:00Z', '2026-03-19T00:00:00Z')).filter(
      (i) => i.uid === 'review-42@example.com',
    );
    assert.deepEqual(left, []);
  });

  it('expands a series past what the read model holds when a far window is asked', async () => {
    await ingest(
      'text/calendar',
      ics('PUBLISH', [
        [
          'UID:standup@example.com',
          'DTSTART;TZID=America/New_York:20260105T093000',
          'DURATION:PT15M',
          'RRULE:FREQ=WEEKLY;BYDAY=MO',
          'SUMMARY:Standup',
        ],
      ]),
      'standup.ics',
    );
    const far = (await list('2040-07-01T00:00:00Z', '2040-07-10T00:00:00Z')).filter(
      (i) => i.uid === 'standup@example.com',
    );
    // Mondays 2 and 9 July 2040, 09:30 EDT (UTC−4).
    assert.deepEqual(
      far.map((i) => i.start),
      ['2040-07-02T13:30:00.000Z', '2040-07-09T13:30:00.000Z'],
    );
  });

  it('takes a calendar file of to-dos alone, which names no event, without a failure', async () => {
    await ingest(
      'text/calendar',
      [
        'BEGIN:VCALENDAR',
        'VERSION:2.0',
        'BEGIN:VTODO',
        'UID:todo-1',
        'SUMMARY:Renew the licence',
        'END:VTODO',
        'END:VCALENDAR',
        '',
      ].join('\r\n'),
      'tasks.ics',
    );
    await list('2026-03-20T00:00:00Z', '2026-03-21T00:00:00Z');
    const db = h.calendar.get<Kysely<Record<string, never>>>(DATABASE);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from projector_failures`.execute(db);
    assert.equal(rows[0]!.n, 0);
  });

  it('forgets the events of a deleted item', async () => {
    const id = await ingest(
      'text/calendar',
      ics('PUBLISH', [
        ['UID:lunch@example.com', 'DTSTART:20260320T120000Z', 'DTEND:20260320T130000Z', 'SUMMARY:Lunch'],
      ]),
      'lunch.ics',
    );
    assert.equal(
      (await list('2026-03-20T00:00:00Z', '2026-03-21T00:00:00Z')).filter((i) => i.uid === 'lunch@example.com').length,
      1,
    );
    seq = (await h.call(ItemsDelete, { id })).seq;
    assert.equal(
      (await list('2026-03-20T00:00:00Z', '2026-03-21T00:00:00Z')).filter((i) => i.uid === 'lunch@example.com').length,
      0,
    );
  });

  it(
    'shows an imported calendar file from the shared corpus with its RDATEs, EXDATEs and moved instances',
    { skip: sharedSkip('corpus/calendar') },
    async () => {
      await ingest(
        'text/calendar',
        fs.readFileSync(sharedFile('corpus/calendar/ical.js/recur_instances.ics')),
        'recur_instances.ics',
      );
      const instances = (await list('2012-10-01T00:00:00Z', '2013-01-01T00:00:00Z')).filter(
        (i) => i.uid === '623c13c0-6c2b-45d6-a12b-c33ad61c4868',
      );
      // First Tuesdays at 10:00 Los Angeles (PDT then PST) and the RDATEs; 12-04 excluded; 10-02 moved to
      // 15:00 PDT, the 11-05 RDATE moved to 11-06 20:00 PST (both by RECURRENCE-ID).
      assert.deepEqual(
        instances.map((i) => [i.start, i.modified]),
        [
          ['2012-10-02T22:00:00.000Z', true],
          ['2012-11-06T18:00:00.000Z', false],
          ['2012-11-07T04:00:00.000Z', true],
          ['2012-11-10T18:00:00.000Z', false],
          ['2012-11-30T18:00:00.000Z', false],
        ],
      );
    },
  );

  it('a replay one event at a time builds the rows the live batches built', async () => {
    const runner = h.calendar.get(ServiceHost).projector!;
    await runner.caughtUp(60_000);
    const rows = async () => {
      const db = createDatabase<CalendarDatabase>(h.env.config.databaseUrl, { schema: 'calendar' });
      try {
        return await Promise.all(
          (['components', 'events', 'instances'] as const).map(async (table) =>
            (await db.selectFrom(table).selectAll().execute()).map((row) => JSON.stringify(row)).sort(),
          ),
        );
      } finally {
        await db.destroy();
      }
    };
    const live = await rows();
    assert.ok(live[0]!.length > 0 && live[2]!.length > 0);
    const handlers = HandlerProjection.of(h.calendar.get(CalendarProjector));
    const oneByOne = new ProjectionRunner(h.bus, h.env.config.databaseUrl, h.calendar.get(DATABASE), runner.options, {
      apply: (trx, logged) => handlers.apply(trx, logged),
    });
    await oneByOne.rebuild(h.env.config.databaseUrl);
    assert.deepEqual(await rows(), live);
  });

  it('refuses a range that ends before it starts, saying so', async () => {
    await assert.rejects(
      h.call(CalendarList, { from: '2026-03-02T00:00:00Z', to: '2026-03-01T00:00:00Z' }),
      /to .* must be after from/,
    );
  });
});
