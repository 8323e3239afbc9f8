/** Calendars and invitations written for tests and benchmarks (CRLF, RFC 5545). */

/** A VCALENDAR with one VEVENT per list of content lines (DTSTAMP added where missing). */
export function ics(method: string | null, events: string[][]): string {
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//memex//test//EN',
    ...(method ? [`METHOD:${method}`] : []),
  ];
  for (const event of events) {
    lines.push(
      'BEGIN:VEVENT',
      ...(event.some((l) => l.startsWith('DTSTAMP')) ? [] : ['DTSTAMP:20260301T120000Z']),
      ...event,
      'END:VEVENT',
    );
  }
  lines.push('END:VCALENDAR', '');
  return lines.join('\r\n');
}

/** A mail carrying an invitation (or its answer) as its text/calendar part, the way calendar clients send them. */
export function invitationMail(method: 'REQUEST' | 'REPLY' | 'CANCEL', event: string[], messageId: string): string {
  const from = method === 'REPLY' ? 'bob@example.com' : 'ada@example.com';
  return [
    `From: ${from}`,
    `To: ${method === 'REPLY' ? 'ada@example.com' : 'bob@example.com'}`,
    `Subject: ${method === 'REQUEST' ? 'Invitation' : method === 'REPLY' ? 'Accepted' : 'Cancelled'}`,
    `Message-ID: <${messageId}@example.com>`,
    'Date: Sun, 01 Mar 2026 12:00:00 +0000',
    'MIME-Version: 1.0',
    'Content-Type: multipart/alternative; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'See the calendar part.',
    '--b',
    `Content-Type: text/calendar; charset=utf-8; method=${method}`,
    '',
    ics(method, [event]).trimEnd(),
    '--b--',
    '',
  ].join('\r\n');
}

const ZONES = ['Europe/Berlin', 'America/New_York', 'Asia/Tokyo', 'America/Los_Angeles', 'Europe/London'];
const RULES = [
  'FREQ=WEEKLY',
  'FREQ=DAILY;COUNT=200',
  'FREQ=WEEKLY;BYDAY=MO,WE,FR',
  'FREQ=MONTHLY;BYDAY=1TU',
  'FREQ=WEEKLY;INTERVAL=2;COUNT=60',
];

function stamp(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').slice(0, 15);
}

/**
 * A calendar of `events` VEVENTs, `series` of them recurring (rules of several kinds, in several
 * zones, each tenth with an EXDATE), the rest single events, all starting within two years of
 * 2025-01-01 and split into files of `perFile` events. Deterministic for a seed.
 */
export function generatedCalendars(events: number, series: number, perFile: number, random: () => number): string[] {
  const all: string[][] = [];
  const origin = Date.UTC(2025, 0, 1);
  for (let n = 0; n < events; n++) {
    const zone = ZONES[n % ZONES.length]!;
    const start = new Date(
      origin + Math.floor(random() * 730) * 86_400_000 + (8 + Math.floor(random() * 10)) * 3_600_000,
    );
    const end = new Date(start.getTime() + (1 + Math.floor(random() * 4)) * 30 * 60_000);
    const lines = [
      `UID:gen-${n}@bench.example`,
      `DTSTART;TZID=${zone}:${stamp(start)}`,
      `DTEND;TZID=${zone}:${stamp(end)}`,
      `SUMMARY:Event ${n}`,
      `ATTENDEE;CN=Person ${n % 97};PARTSTAT=ACCEPTED:mailto:person${n % 97}@bench.example`,
    ];
    if (n < series) {
      lines.push(`RRULE:${RULES[n % RULES.length]}`);
      if (n % 10 === 0) lines.push(`EXDATE;TZID=${zone}:${stamp(new Date(start.getTime() + 7 * 86_400_000))}`);
    }
    all.push(lines);
  }
  const files: string[] = [];
  for (let i = 0; i < all.length; i += perFile) files.push(ics('PUBLISH', all.slice(i, i + perFile)));
  return files;
}

/**
 * The same mix as `generatedCalendars` as Calendar v3 events (for the fake Google): `series` of
 * them recurring, each tenth series with an EXDATE.
 */
export function generatedGoogleEvents(
  events: number,
  series: number,
  random: () => number,
): Array<Record<string, unknown> & { id: string }> {
  const origin = Date.UTC(2025, 0, 1);
  const out: Array<Record<string, unknown> & { id: string }> = [];
  for (let n = 0; n < events; n++) {
    const timeZone = ZONES[n % ZONES.length]!;
    const start = new Date(
      origin + Math.floor(random() * 730) * 86_400_000 + (8 + Math.floor(random() * 10)) * 3_600_000,
    );
    const end = new Date(start.getTime() + (1 + Math.floor(random() * 4)) * 30 * 60_000);
    const recurrence =
      n < series
        ? [
            `RRULE:${RULES[n % RULES.length]}`,
            ...(n % 10 === 0 ? [`EXDATE:${stamp(new Date(start.getTime() + 7 * 86_400_000))}Z`] : []),
          ]
        : undefined;
    out.push({
      id: `g${n}`,
      summary: `Event ${n}`,
      start: { dateTime: start.toISOString(), timeZone },
      end: { dateTime: end.toISOString(), timeZone },
      attendees: [{ email: `person${n % 97}@bench.example`, responseStatus: 'accepted' }],
      ...(recurrence ? { recurrence } : {}),
    });
  }
  return out;
}
