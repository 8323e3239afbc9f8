/** Calendars and invitations written for tests and benchmarks (CRLF, RFC 5545). */

/** A VCALENDAR with one VEVENT per list of content lines (DTSTAMP added where missing). */
export function ics(method: string | null, events: string[][]): string {
  const lines = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//memex//test//EN', ...(method ? [`METHOD:${method}`] : [])];
  for (const event of events) {
    lines.push('BEGIN:VEVENT', ...(event.some((l) => l.startsWith('DTSTAMP')) ? [] : ['DTSTAMP:20260301T120000Z']), ...event, 'END:VEVENT');
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
