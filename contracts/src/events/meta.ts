import { Type, type Static, type TSchema } from '@sinclair/typebox';

// `item.ingested`'s meta by the item's kind, as services/ingest's handlers write it. Each schema
// declares the fields other services read; the handlers keep more (seed §4.5), so every object
// allows additional properties. The catalog checks every published item.ingested against the
// schema of its kind, so a handler that changes a shape fails where it publishes, and a consumer
// that narrows on `data.kind` reads typed fields with no accessor and no cast.

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Strings = Type.Array(Type.String());

/** An email address with its display name, as a handler read it. */
export const Address = Type.Object({ name: Type.String(), address: Type.String() }, { additionalProperties: false });
export type Address = Static<typeof Address>;
const Addresses = Type.Array(Address);

/** A `[[target#heading|alias]]` (or `![[embed]]`) in Markdown. */
export const WikiLink = Type.Object({
  target: Type.String(),
  heading: Nullable(Type.String()),
  alias: Nullable(Type.String()),
  embed: Type.Boolean(),
});

/** What any item's meta may carry beside its kind's fields (a nested part's too). */
const Common = {
  /** Non-fatal problems met while parsing (truncation, charset fallbacks). */
  warnings: Type.Optional(Strings),
  /** The item has no plausible date of its own: the envelope's occurred_at is when it was logged. */
  undated: Type.Optional(Type.Boolean()),
};

/** A message's headers, people, thread and flags (the mail handler's reading; also a forwarded message's). */
export const MailMeta = Type.Object({
  ...Common,
  /** Normalised Message-ID (no angle brackets, lowercase), or null when the message has none. */
  messageId: Nullable(Type.String()),
  inReplyTo: Nullable(Type.String()),
  references: Strings,
  /** The conversation the message belongs to (ingest's threading rule). */
  threadKey: Type.String(),
  /**
   * Outlook's conversation (`thread-index:` and the hex of the first 22 bytes of Thread-Index:
   * when it began and its GUID), when the message carries one: messages with the same one are one
   * thread, a reply Outlook or Exchange sent without References too.
   */
  conversation: Type.Optional(Type.String()),
  subject: Type.String(),
  from: Addresses,
  to: Addresses,
  cc: Addresses,
  bcc: Addresses,
  replyTo: Addresses,
  /** The Date header (ISO), or null when missing, unparseable or implausible. */
  date: Nullable(Type.String()),
  /**
   * Where occurred_at came from: the Date header, the Received headers (the Date was missing or
   * implausible), the `received` attribute (mbox `From ` line, Maildir name), the file's time (the
   * `modified` attribute), or nowhere (undated).
   */
  dateSource: Nullable(
    Type.Union([
      Type.Literal('header'),
      Type.Literal('received-header'),
      Type.Literal('received'),
      Type.Literal('file'),
    ]),
  ),
  spam: Type.Boolean(),
  /** Why the message is spam ('folder "Junk"', 'X-Spam-Flag: YES'), or null. */
  spamReason: Nullable(Type.String()),
  /** List-Id without angle brackets, lowercase, or null. */
  mailingList: Nullable(Type.String()),
  /**
   * The sender as the message says it was before a mailing list rewrote From (X-Original-From:
   * Mailman's and Google Groups' DMARC munging), when it says; absent otherwise.
   */
  originalFrom: Type.Optional(Addresses),
  flags: Type.Object({ read: Type.Boolean(), starred: Type.Boolean() }),
  folder: Nullable(Type.String()),
  /** Labels this message carries on import: its folder, when it has one; its Gmail labels in a Takeout. */
  labels: Strings,
  /**
   * A Google Takeout message's `X-Gmail-Labels` (as Gmail ids: INBOX, UNREAD, user names…) and
   * `X-GM-THRID`: its flags and mail labels in the mail views come from these.
   */
  gmail: Type.Optional(Type.Object({ labels: Strings, threadId: Nullable(Type.String()) })),
  /** A multipart body ended before its closing boundary; what was readable is kept. */
  truncated: Type.Boolean(),
  /** Another, different message has the same Message-ID (a bulk sender's reused id): both are kept. */
  sharedMessageId: Type.Optional(Type.Boolean()),
  /** Whether the text came from a text/plain part or was derived from the HTML part. */
  textSource: Type.Union([Type.Literal('plain'), Type.Literal('html'), Type.Literal('none')]),
});
export type MailMeta = Static<typeof MailMeta>;

/** An email item: its message, and its attachments as the items they became. */
export const EmailMeta = Type.Object({
  ...MailMeta.properties,
  attachments: Type.Array(
    Type.Object({
      id: Type.String(),
      filename: Nullable(Type.String()),
      content_type: Type.String(),
      size: Type.Integer({ minimum: 0 }),
    }),
  ),
});
export type EmailMeta = Static<typeof EmailMeta>;

/** A PDF page as a range of the item's text (pages are joined by blank lines; numbered from 1). */
export const PageRange = Type.Object({
  page: Type.Integer({ minimum: 1 }),
  start: Type.Integer({ minimum: 0 }),
  end: Type.Integer({ minimum: 0 }),
});
export type PageRange = Static<typeof PageRange>;

const DocumentBase = {
  ...Common,
  /** The content type the document was parsed as (parameters dropped). */
  contentType: Type.String(),
  size: Type.Integer({ minimum: 0 }),
  filename: Nullable(Type.String()),
  /** Where it came from: the `url` attribute, else an HTML page's canonical URL. */
  url: Nullable(Type.String()),
};

/** A PDF: its pages and document information, and a paper's own ids. */
export const PdfMeta = Type.Object({
  ...DocumentBase,
  format: Type.Literal('pdf'),
  pages: Type.Array(PageRange),
  /** The document information dictionary's text fields (Title, Author, CreationDate...). */
  info: Type.Record(Type.String(), Type.String()),
  /** A research paper's own DOI and arXiv id, when the PDF is one. */
  paper: Type.Optional(Type.Object({ doi: Nullable(Type.String()), arxiv: Nullable(Type.String()) })),
});
export type PdfMeta = Static<typeof PdfMeta>;

/** A Markdown document: its front matter, [[links]] and #tags, parsed once by the ingest handler. */
export const MarkdownMeta = Type.Object({
  ...DocumentBase,
  format: Type.Literal('markdown'),
  /** The YAML front matter; null when absent or not a YAML mapping. */
  frontMatter: Nullable(Type.Record(Type.String(), Type.Unknown())),
  links: Type.Array(WikiLink),
  /** #tags outside code and headings, plus front matter `tags`, without the #, first spelling kept. */
  tags: Strings,
  headings: Strings,
});
export type MarkdownMeta = Static<typeof MarkdownMeta>;

/** The formats whose structure no other service reads: their fields beyond `format` are the handler's. */
const OtherDocumentMeta = (
  format:
    | 'docx'
    | 'text'
    | 'html'
    | 'rst'
    | 'rtf'
    | 'xlsx'
    | 'pptx'
    | 'opendocument'
    | 'epub'
    | 'doc'
    | 'xls'
    | 'ppt'
    | 'iwork'
    | 'notebook',
) => Type.Object({ ...DocumentBase, format: Type.Literal(format) });

/** A document by its format. */
export const DocumentMeta = Type.Union([
  PdfMeta,
  MarkdownMeta,
  OtherDocumentMeta('docx'),
  OtherDocumentMeta('text'),
  OtherDocumentMeta('html'),
  OtherDocumentMeta('rst'),
  OtherDocumentMeta('rtf'),
  OtherDocumentMeta('xlsx'),
  OtherDocumentMeta('pptx'),
  OtherDocumentMeta('opendocument'),
  OtherDocumentMeta('epub'),
  OtherDocumentMeta('doc'),
  OtherDocumentMeta('xls'),
  OtherDocumentMeta('ppt'),
  // Pages, Numbers and Keynote.
  OtherDocumentMeta('iwork'),
  // Jupyter notebooks.
  OtherDocumentMeta('notebook'),
]);
export type DocumentMeta = Static<typeof DocumentMeta>;

const CalendarPerson = Type.Object({
  name: Type.String(),
  /** The mail address, lowercase, without `mailto:` ('' when the value is not a mail address). */
  address: Type.String(),
});

/** One VEVENT as @memex/icalendar reads it (its CalendarEvent). */
export const CalendarEvent = Type.Object({
  uid: Type.String(),
  /** Set on a changed (or cancelled) instance of a series: the instance's original start. */
  recurrenceId: Nullable(Type.String()),
  sequence: Type.Integer(),
  status: Type.Union([Type.Literal('confirmed'), Type.Literal('tentative'), Type.Literal('cancelled')]),
  summary: Type.String(),
  description: Type.String(),
  location: Type.String(),
  /** UTC instants (ISO 8601). */
  start: Type.String(),
  end: Type.String(),
  allDay: Type.Boolean(),
  startDate: Nullable(Type.String()),
  endDate: Nullable(Type.String()),
  timeZone: Nullable(Type.String()),
  recurrence: Nullable(Type.Object({ rules: Strings, rdates: Strings, exdates: Strings })),
  source: Nullable(Type.String()),
  organizer: Nullable(CalendarPerson),
  attendees: Type.Array(
    Type.Object({
      ...CalendarPerson.properties,
      status: Type.Union([
        Type.Literal('needs-action'),
        Type.Literal('accepted'),
        Type.Literal('declined'),
        Type.Literal('tentative'),
        Type.Literal('delegated'),
      ]),
      role: Type.String(),
    }),
  ),
  transparent: Type.Boolean(),
  url: Nullable(Type.String()),
});

/** An iCalendar file or mail part (`text/calendar`). */
/** A to-do (VTODO) or a journal entry (VJOURNAL) of a calendar file, as @memex/icalendar reads it. */
export const CalendarEntry = Type.Object({
  kind: Type.Union([Type.Literal('todo'), Type.Literal('journal')]),
  uid: Nullable(Type.String()),
  summary: Type.String(),
  description: Type.String(),
  status: Nullable(Type.String()),
  categories: Strings,
  start: Nullable(Type.String()),
  due: Nullable(Type.String()),
  completed: Nullable(Type.String()),
});

export const CalendarMeta = Type.Object({
  ...Common,
  format: Type.Literal('icalendar'),
  /** METHOD: REQUEST, REPLY, CANCEL (an invitation and its answers), PUBLISH, or null. */
  method: Nullable(Type.String()),
  calendarName: Nullable(Type.String()),
  timeZone: Nullable(Type.String()),
  filename: Nullable(Type.String()),
  events: Type.Array(CalendarEvent),
  /** Its to-dos and journal entries (absent before they were read). */
  entries: Type.Optional(Type.Array(CalendarEntry)),
});
export type CalendarMeta = Static<typeof CalendarMeta>;

/**
 * A vCard file, or an address book exported as CSV (Google, Outlook, Thunderbird, LinkedIn): its
 * cards (the handler keeps every field; these are the ones read elsewhere).
 */
export const ContactsMeta = Type.Object({
  ...Common,
  format: Type.Union([Type.Literal('vcard'), Type.Literal('csv')]),
  filename: Nullable(Type.String()),
  cards: Type.Array(
    Type.Object({
      fullName: Type.String(),
      emails: Type.Array(Type.Object({ address: Type.String() })),
      /** E.164 when the handler could read the number (cards read before it did carry none). */
      phones: Type.Optional(Type.Array(Type.Object({ e164: Nullable(Type.String()) }))),
    }),
  ),
});

/** An attachment of a message: what it is, and what it was read as. */
export const AttachmentMeta = Type.Object({
  ...Common,
  filename: Nullable(Type.String()),
  contentType: Type.String(),
  size: Type.Integer({ minimum: 0 }),
  /** Content-ID without angle brackets, for inline parts referenced from the HTML body. */
  contentId: Nullable(Type.String()),
  inline: Type.Boolean(),
  /** How the attachment's text was obtained, or null when it has none. */
  parsedAs: Nullable(Type.Union([Type.Literal('document'), Type.Literal('email'), Type.Literal('calendar')])),
  document: Nullable(DocumentMeta),
  /** The invitation or calendar a `text/calendar` part holds. */
  calendar: Type.Optional(Nullable(CalendarMeta)),
  email: Nullable(MailMeta),
  /** Why a supported attachment has no text (its own rejection reason), or null. */
  unreadable: Nullable(Type.String()),
});

/** A position: decimal degrees, metres. */
const Position = Type.Object({
  latitude: Type.Number(),
  longitude: Type.Number(),
  altitude: Nullable(Type.Number()),
});

/** A photo's reading (EXIF, XMP, a Takeout sidecar); its pixels are the media service's work. */
export const PhotoMeta = Type.Object({
  ...Common,
  /** The image format its first bytes say (jpeg, png, heic…). */
  format: Type.String(),
  contentType: Type.String(),
  filename: Nullable(Type.String()),
  /** Where occurred_at came from: EXIF, the XMP or IPTC in the file, a Takeout sidecar, the file's time, or nowhere. */
  timeSource: Nullable(
    Type.Union([
      Type.Literal('exif'),
      Type.Literal('xmp'),
      Type.Literal('iptc'),
      Type.Literal('takeout'),
      Type.Literal('file'),
    ]),
  ),
  gps: Nullable(Position),
  /** Apple's content identifier: a Live Photo's still and its motion clip share it (absent in older events). */
  contentIdentifier: Type.Optional(Nullable(Type.String())),
  /**
   * The faces its XMP names (MWG regions of type Face, Microsoft's people tags): a name and a box
   * as fractions of the image from its top left, as the file states it (absent in older events).
   */
  regions: Type.Optional(
    Type.Array(
      Type.Object({
        name: Type.String(),
        box: Nullable(Type.Object({ x: Type.Number(), y: Type.Number(), w: Type.Number(), h: Type.Number() })),
        source: Type.Union([Type.Literal('mwg'), Type.Literal('microsoft')]),
      }),
    ),
  ),
});

/** A segment of a recording's transcript, at its second. */
const TranscriptSegment = Type.Object({ start: Type.Number(), end: Type.Number(), text: Type.String() });

/** A video or an audio recording: ffprobe's reading and the transcript. */
export const AvMeta = Type.Object({
  ...Common,
  contentType: Type.String(),
  filename: Nullable(Type.String()),
  /** The container's creation time, or null when it does not say. */
  createdAt: Nullable(Type.String()),
  gps: Nullable(Position),
  /** Apple's content identifier: a Live Photo's motion clip shares it with its still (absent in older events). */
  contentIdentifier: Type.Optional(Nullable(Type.String())),
  transcript: Nullable(
    Type.Object({ engine: Type.String(), language: Nullable(Type.String()), segments: Type.Array(TranscriptSegment) }),
  ),
});

/** A session digest (seed §3.1). */
export const SessionDigestMeta = Type.Object({
  ...Common,
  format: Type.Literal('session_digest'),
  session: Type.String(),
});

/** A web page an agent's session read. */
export const WebPageMeta = Type.Object({
  ...Common,
  format: Type.Literal('web_page'),
  url: Type.String(),
  read_at: Type.String(),
});

/** The meta of each item kind (`data.kind` picks it): the kinds the ingest handlers produce. */
export const metaByKind = {
  email: EmailMeta,
  attachment: AttachmentMeta,
  document: DocumentMeta,
  /** A paper is always a PDF (one naming its own DOI or arXiv id, or with references). */
  paper: PdfMeta,
  photo: PhotoMeta,
  video: AvMeta,
  audio: AvMeta,
  event: CalendarMeta,
  contact: ContactsMeta,
  session_digest: SessionDigestMeta,
  web: WebPageMeta,
};
