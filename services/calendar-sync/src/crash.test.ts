import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { CalendarList } from '@memex/contracts';
import { createDatabase } from '@memex/db';
import { spawnService, waitUntil } from '@memex/testing';
import { startGoogleCalendar } from './testing/google.js';

const ACCOUNT = 'owner@example.com';
const EVENTS = 1000;

test('SIGKILL of calendar-sync in the middle of a first Google sync, then a restart: every event in the calendar exactly once', async () => {
  const h = await startGoogleCalendar({ calendarSync: false });
  const db = createDatabase<Record<string, never>>(h.env.config.databaseUrl, { schema: 'public' });
  h.calendar.addCalendar('primary', 'Owner', 'Europe/Berlin');
  for (let n = 0; n < EVENTS; n++) {
    const start = new Date(Date.UTC(2026, 0, 1) + n * 3_600_000);
    h.calendar.put('primary', {
      id: `e${n}`,
      summary: `Event ${n}`,
      start: { dateTime: start.toISOString() },
      end: { dateTime: new Date(start.getTime() + 1_800_000).toISOString() },
    });
  }
  // Four pages of 250, each a little slow: the kill lands while pages are still being read.
  h.calendar.pageDelayMs = 300;
  process.env.MEMEX_CALENDAR_POLL_MS = '100';
  let child = spawnService(h.env.config, 'calendar-sync');
  const held = async () =>
    (
      await sql<{ n: number }>`select count(*)::int as n from calendar.google_events`
        .execute(db)
        .catch(() => ({ rows: [{ n: 0 }] }))
    ).rows[0]!.n;
  try {
    await waitUntil(
      async () =>
        (await h
          .call(CalendarList, { from: '2000-01-01T00:00:00Z', to: '2000-01-02T00:00:00Z' })
          .catch(() => undefined)) !== undefined,
      'calendar-sync to answer',
    );
    await h.connect(ACCOUNT);
    await waitUntil(async () => (await held()) >= 250, 'a page synced', { everyMs: 20 });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const atKill = await held();
    assert.ok(atKill < EVENTS, `killed in the middle (${atKill} of ${EVENTS} held)`);

    h.calendar.pageDelayMs = 0;
    child = spawnService(h.env.config, 'calendar-sync');
    const synced = async () =>
      (
        await sql<{ token: string | null }>`select sync_token as token from calendar.google_calendars`
          .execute(db)
          .catch(() => ({ rows: [] }))
      ).rows[0]?.token;
    await waitUntil(async () => Boolean(await synced()), 'the first sync to finish after the restart');
    await h.call(CalendarList, {
      from: '2000-01-01T00:00:00Z',
      to: '2000-01-02T00:00:00Z',
      min_seq: await h.bus.lastSeq(),
    });
    const counts = await sql<{ components: number; sources: number; events: number; instances: number }>`
      select (select count(*)::int from calendar.components) as components,
             (select count(distinct item_id)::int from calendar.components) as sources,
             (select count(*)::int from calendar.events) as events,
             (select count(*)::int from calendar.instances) as instances`.execute(db);
    assert.deepEqual(counts.rows[0], { components: EVENTS, sources: EVENTS, events: EVENTS, instances: EVENTS });
    const { instances } = await h.call(CalendarList, { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' });
    assert.deepEqual(
      instances.map((i) => i.summary),
      Array.from({ length: 24 }, (_, n) => `Event ${n}`),
    );
  } finally {
    child.kill('SIGKILL');
    await db.destroy();
    await h.stop();
  }
});
