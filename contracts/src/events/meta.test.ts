import { test } from 'node:test';
import assert from 'node:assert/strict';
import { calendarOf, eventCatalog, isEventOf, ItemIngested, pdfMetaOf } from '../index.js';

const ID = '01JDZ6Q4X8N5V2W3Y4Z5A6B7C8';
const SHA = '0'.repeat(64);

const email = {
  messageId: 'm1@example.com',
  inReplyTo: null,
  references: [],
  threadKey: 'm1@example.com',
  subject: 'Hello',
  from: [{ name: 'Ann', address: 'ann@example.com' }],
  to: [],
  cc: [],
  bcc: [],
  replyTo: [],
  date: '2026-12-01T10:00:00.000Z',
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
  // What the handler keeps beyond what others read is allowed.
  anythingElse: { kept: true },
};

const pdf = {
  contentType: 'application/pdf',
  size: 10,
  filename: 'a.pdf',
  url: null,
  format: 'pdf',
  pages: [{ page: 1, start: 0, end: 4 }],
  info: { Title: 'A' },
};

function itemIngested(kind: string, meta: unknown) {
  return {
    id: ID,
    type: 'item.ingested',
    v: 1,
    subject: `item:${ID}`,
    occurred_at: '2026-12-01T10:00:00.000Z',
    recorded_at: '2026-12-01T10:00:00.000Z',
    actor: { kind: 'import', id: 'test' },
    labels: [],
    data: {
      id: ID,
      kind,
      revision: 1,
      title: 't',
      source: { kind: 'import:test', id: '' },
      external_id: null,
      identity: `sha256:${SHA}`,
      origin: 'imported',
      content_type: 'text/plain',
      content_sha256: SHA,
      size: 10,
      text_sha256: SHA,
      text_length: 4,
      meta,
    },
  };
}

test("item.ingested's meta is checked against its kind's schema, extra fields allowed", () => {
  assert.equal(eventCatalog.validate(itemIngested('email', email)).type, 'item.ingested');
  assert.equal(eventCatalog.validate(itemIngested('paper', pdf)).type, 'item.ingested');
  assert.equal(eventCatalog.validate(itemIngested('document', pdf)).type, 'item.ingested');
});

test('a meta not of its kind is refused, the reason naming the field of the kind it claims', () => {
  const cases: [unknown, RegExp][] = [
    // An email whose meta lacks its people: the email branch says so, not "Expected union value".
    [itemIngested('email', { ...email, from: undefined }), /data\.meta\.from: Expected array/],
    [
      itemIngested('email', { ...email, flags: { read: 'yes', starred: false } }),
      /data\.meta\.flags\.read: Expected boolean/,
    ],
    // A paper is a PDF: a Markdown meta is not one.
    [itemIngested('paper', { ...pdf, format: 'markdown' }), /data\.meta\.format/],
    [itemIngested('document', { ...pdf, pages: [{ page: 0, start: 0, end: 1 }] }), /data\.meta\.pages\.0\.page/],
    // A kind no handler produces.
    [itemIngested('hologram', {}), /data\.kind: Expected one of "email", "attachment", "document"/],
  ];
  for (const [envelope, message] of cases) assert.throws(() => eventCatalog.validate(envelope), message);
});

test('narrowing on kind types the meta: the PDF and the calendar an item is or carries', () => {
  const read = (kind: string, meta: unknown) => {
    const event = eventCatalog.validate(itemIngested(kind, meta));
    assert.ok(isEventOf(ItemIngested, event));
    return event.data;
  };
  const paper = read('paper', pdf);
  assert.deepEqual(pdfMetaOf(paper)?.pages, pdf.pages);
  assert.equal(calendarOf(paper), null);
  const mail = read('email', email);
  assert.equal(pdfMetaOf(mail), null);
  // Typed without an accessor: the compiler knows an email's meta has `from`.
  assert.equal(mail.kind === 'email' && mail.meta.from[0]?.address, 'ann@example.com');
});
