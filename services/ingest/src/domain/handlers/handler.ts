import type { TSchema } from '@sinclair/typebox';
import type { MailMeta } from '@memex/contracts';
import type { CalendarEntry, CalendarEvent, ContactCard, ContactPhoto } from '@memex/icalendar';
import type { WikiLink } from '@memex/markdown';
import type { AvMeta, PhotoMeta } from './media/media-item.js';
import type { SessionDigestMeta, WebPageMeta } from './agent/agent-work-handler.js';

/** The item kinds of the data model (seed §4.1). Handlers produce a subset. */
export type ItemKind =
  | 'email'
  | 'attachment'
  | 'document'
  | 'paper'
  | 'note'
  | 'photo'
  | 'video'
  | 'audio'
  | 'web'
  | 'session_digest'
  | 'output'
  | 'event'
  | 'contact';

/** What a caller hands to a handler: the item's bytes, its MIME type as sent, its attributes. */
export interface HandlerInput {
  bytes: Buffer;
  /** The MIME type as the caller sent it, parameters included (`text/plain; charset=koi8-r`). */
  type: string;
  /** Already checked against the handler's attribute schema (see HandlerRegistry.parse). */
  attributes: Record<string, unknown>;
}

/**
 * A registered handler: one standard format family, its identity rule, its limit, and its parser.
 * Everything but `parse` is declared data that memex.types lists.
 */
export interface IngestHandler {
  name: string;
  /** MIME types accepted, lowercase, without parameters. */
  types: string[];
  /** Strict JSON Schema (additionalProperties: false) of the attributes this handler takes. */
  attributesSchema: TSchema;
  /** Human text for memex.types: how the handler recognises an item it already has. */
  identityRule: string;
  /** The largest item accepted, in bytes; checked before parsing. */
  limitBytes: number;
  /** The item kinds this handler creates (an email produces email plus attachment items). */
  produces: ItemKind[];
  /**
   * Whether the same source + external_id arriving with new content replaces the item (`updated`).
   * False for mail: a message never changes, so new bytes under a known id are a duplicate.
   */
  updatable: boolean;
  parse(input: HandlerInput): Promise<ParsedItem>;
}

// A message's reading is item.ingested's email meta as it is: one declaration, in the contract.
export type { Address, MailMeta } from '@memex/contracts';

/** A page of a PDF, numbered from 1. */
export interface PdfPage {
  page: number;
  text: string;
}

interface DocumentMetaBase {
  /** The content type the document was parsed as (parameters dropped). */
  contentType: string;
  size: number;
  filename: string | null;
  /** Where it came from: the `url` attribute, else an HTML page's canonical URL. */
  url: string | null;
}

export interface PdfFields {
  format: 'pdf';
  pages: PdfPage[];
  /** The document information dictionary's text fields (Title, Author, CreationDate...). */
  info: Record<string, string>;
  /** A research paper's own DOI and arXiv id (document/paper.ts), when the PDF is one. */
  paper?: { doi: string | null; arxiv: string | null };
}

export interface DocxFields {
  format: 'docx';
  headings: string[];
}

export interface MarkdownFields {
  format: 'markdown';
  /** The YAML front matter, kept as metadata; null when absent or not a YAML mapping. */
  frontMatter: Record<string, unknown> | null;
  /** [[wiki links]] outside code, in order of appearance, for linking later. */
  links: WikiLink[];
  /** #tags outside code and headings, plus front matter `tags`, without the #, first spelling kept. */
  tags: string[];
  headings: string[];
}

export interface TextFields {
  format: 'text';
  charset: string;
}

export interface HtmlFields {
  format: 'html';
  charset: string;
  /** <link rel="canonical">, resolved against the `url` attribute when relative. */
  canonicalUrl: string | null;
  byline: string | null;
  siteName: string | null;
  lang: string | null;
  /** False when Readability found no article and the page's body text was used instead. */
  readable: boolean;
}

export interface RstFields {
  format: 'rst';
  headings: string[];
}

export interface RtfFields {
  format: 'rtf';
}

/** Spreadsheets, presentations, OpenDocument files, e-books and notebooks: their sheets' names, slides' titles or headings. */
export interface OfficeFields {
  format: 'xlsx' | 'pptx' | 'opendocument' | 'epub' | 'doc' | 'xls' | 'ppt' | 'iwork' | 'notebook';
  headings: string[];
}

export type FormatFields =
  PdfFields | DocxFields | MarkdownFields | TextFields | HtmlFields | RstFields | RtfFields | OfficeFields;

export type DocumentMeta = DocumentMetaBase & FormatFields;

/** An iCalendar file or mail part (`text/calendar`), read by ical.js (see calendar/calendar-handler.ts). */
export interface CalendarMeta {
  format: 'icalendar';
  /** METHOD: REQUEST, REPLY, CANCEL (an invitation and its answers), PUBLISH, or null. */
  method: string | null;
  calendarName: string | null;
  timeZone: string | null;
  filename: string | null;
  events: CalendarEvent[];
  /** Its to-dos and journal entries, when it has any. */
  entries?: CalendarEntry[];
  otherComponents: Record<string, number>;
}

/** A contact photo as the item keeps it: the bytes are the `photo` child at `child`, else a link. */
export type ContactPhotoRef = Omit<ContactPhoto, 'bytes'> & { child: number | null };

/** A vCard file (one or many cards), read by ical.js (see contacts/contacts-handler.ts). */
export interface ContactsMeta {
  format: 'vcard' | 'csv';
  filename: string | null;
  cards: Array<Omit<ContactCard, 'photos'> & { photos: ContactPhotoRef[] }>;
}

export interface AttachmentMeta {
  filename: string | null;
  contentType: string;
  size: number;
  /** Content-ID without angle brackets, for inline parts referenced from the HTML body. */
  contentId: string | null;
  inline: boolean;
  /** How the attachment's text was obtained, or why there is none. */
  parsedAs: 'document' | 'email' | 'calendar' | null;
  document: DocumentMeta | null;
  /** The invitation or calendar a `text/calendar` part holds. */
  calendar?: CalendarMeta | null;
  email: MailMeta | null;
  /** Why a supported attachment has no text (its own rejection reason), or null. */
  unreadable: string | null;
}

interface ParsedBase {
  /** The dedupe key: `message-id:<id>`, `mail-sha256:<hex>` or `sha256:<hex>`. */
  identity: string;
  /** Other identities the item is known by (a paper's DOI beside its arXiv id). */
  aliases?: string[];
  title: string;
  /** Searchable plain text. */
  text: string;
  /** When it happened in the world (ISO 8601), or null when unknown. */
  occurredAt: string | null;
  /** Non-fatal problems met while parsing (truncation, bad base64 in a part, charset fallbacks). */
  warnings: string[];
  /**
   * Labels the item's own content gives it (a photo's keywords, `keyword:<word>`), added to those
   * it was sent with (prepare.ts: an agent's only within its scope).
   */
  labels?: string[];
  children?: ParsedItem[];
  /**
   * The item's own bytes when they are not the input's (attachments): the service stores them
   * as a blob. Top-level items omit it; their blob is the input itself.
   */
  contentBytes?: Buffer;
}

export interface EmailItem extends ParsedBase {
  kind: 'email';
  meta: MailMeta;
}

export interface DocumentItem extends ParsedBase {
  /** A PDF that is a research paper is a `paper` (document/paper.ts). */
  kind: 'document' | 'paper';
  meta: DocumentMeta;
}

export interface AttachmentItem extends ParsedBase {
  kind: 'attachment';
  meta: AttachmentMeta;
}

/** A photo (media/photo-handler.ts): its pixels are the media service's work. */
export interface PhotoItem extends ParsedBase {
  kind: 'photo';
  meta: PhotoMeta;
}

/** An iCalendar file or invitation (calendar/calendar-handler.ts). */
export interface CalendarItem extends ParsedBase {
  kind: 'event';
  meta: CalendarMeta;
}

/** A vCard file (contacts/contacts-handler.ts). */
export interface ContactItem extends ParsedBase {
  kind: 'contact';
  meta: ContactsMeta;
}

/** A video or an audio recording (media/av-handler.ts), with its transcript. */
export interface AvItem extends ParsedBase {
  kind: 'video' | 'audio';
  meta: AvMeta;
}

/** An agent's work (agent/agent-work-handler.ts): a session digest, or a web page a session read. */
export interface AgentWorkItem extends ParsedBase {
  kind: 'session_digest' | 'web';
  meta: SessionDigestMeta | WebPageMeta;
}

export type ParsedItem =
  EmailItem | DocumentItem | AttachmentItem | PhotoItem | AvItem | CalendarItem | ContactItem | AgentWorkItem;

/**
 * The per-item rejection: `reason` is written for the person who sent the item
 * ("not an RFC 822 message: no headers"). A batch goes on with the next item.
 */
/** `text/plain; charset=x` and `Text/Plain` are both `text/plain`. */
export function baseType(type: string): string {
  return (type.split(';')[0] ?? '').trim().toLowerCase();
}

export class RejectedItem extends Error {
  readonly reason: string;
  /**
   * True when the handler failed in a way it did not foresee (a library threw). The item is still
   * rejected, not the batch, but this is a bug to fix; tests assert it never happens.
   */
  readonly unexpected: boolean;

  constructor(reason: string, options?: { cause?: unknown; unexpected?: boolean }) {
    super(reason, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RejectedItem';
    this.reason = reason;
    this.unexpected = options?.unexpected ?? false;
  }
}
