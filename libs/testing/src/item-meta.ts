import type { ItemDataOf, ItemKind, PageRange } from '@memex/contracts';

type MetaOf<K extends ItemKind> = ItemDataOf<K>['meta'];

const documentBase = (contentType: string, size: number) => ({ contentType, size, filename: null, url: null });
const recording = (contentType: string) => ({
  contentType,
  filename: null,
  createdAt: null,
  gps: null,
  transcript: null,
});

/**
 * For tests that publish item.ingested themselves: each kind's meta as ingest's handlers write it
 * for a small item that says nothing more (no people, no pages, no place), which the catalog
 * accepts. `size` is the item's size in bytes.
 */
const plain: { [K in ItemKind]: (size: number) => MetaOf<K> } = {
  email: () => ({
    messageId: null,
    inReplyTo: null,
    references: [],
    threadKey: 'thread',
    subject: '',
    from: [],
    to: [],
    cc: [],
    bcc: [],
    replyTo: [],
    date: null,
    dateSource: 'header',
    spam: false,
    spamReason: null,
    mailingList: null,
    flags: { read: true, starred: false },
    folder: null,
    labels: [],
    truncated: false,
    textSource: 'plain',
    attachments: [],
  }),
  attachment: (size) => ({
    filename: null,
    contentType: 'application/octet-stream',
    size,
    contentId: null,
    inline: false,
    parsedAs: null,
    document: null,
    email: null,
    unreadable: null,
  }),
  document: (size) => ({ ...documentBase('text/plain', size), format: 'text' }),
  paper: (size) => pdfMeta([], size),
  photo: () => ({ format: 'jpeg', contentType: 'image/jpeg', filename: null, timeSource: null, gps: null }),
  video: () => recording('video/mp4'),
  audio: () => recording('audio/mpeg'),
  event: () => ({ format: 'icalendar', method: null, calendarName: null, timeZone: null, filename: null, events: [] }),
  contact: () => ({ format: 'vcard', filename: null, cards: [] }),
  session_digest: () => ({ format: 'session_digest', session: 'session' }),
  web: () => ({ format: 'web_page', url: 'https://example.org/', read_at: '2026-01-01T00:00:00.000Z' }),
};

/** An item of `kind` with its handler's meta for a plain item, `fields` put over it (`{ from: [...] }`). */
export function itemMeta<K extends ItemKind>(
  kind: K,
  fields: Partial<MetaOf<K>> = {},
  size = 0,
): { kind: K; meta: MetaOf<K> } {
  const meta = plain[kind](size);
  Object.assign(meta, fields);
  return { kind, meta };
}

/** A single confirmed one-hour VEVENT as @memex/icalendar reads it, `fields` put over it. */
export function calendarEvent(
  fields: Partial<MetaOf<'event'>['events'][number]> = {},
): MetaOf<'event'>['events'][number] {
  return {
    uid: 'event@example.com',
    recurrenceId: null,
    sequence: 0,
    status: 'confirmed',
    summary: '',
    description: '',
    location: '',
    start: '2026-03-18T09:00:00.000Z',
    end: '2026-03-18T10:00:00.000Z',
    allDay: false,
    startDate: null,
    endDate: null,
    timeZone: null,
    recurrence: null,
    source: null,
    organizer: null,
    attendees: [],
    transparent: false,
    url: null,
    ...fields,
  };
}

/** A PDF's meta (a document or paper): its pages as ranges of its text, its document information. */
export function pdfMeta(pages: PageRange[], size: number, info: Record<string, string> = {}): MetaOf<'paper'> {
  return { ...documentBase('application/pdf', size), format: 'pdf', pages, info };
}
