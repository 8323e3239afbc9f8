import { Type, type Static } from '@sinclair/typebox';
import { compile } from '../validation.js';
import { Address, WikiLink, type ItemIngested } from './items.js';
import type { DataOf } from './envelope.js';

// What consumers read of `item.ingested`'s meta, by the item's kind, as the ingest handlers write
// it. The meta carries more (each handler keeps its own structure: seed §4.5); these schemas
// name the fields other services depend on, and the accessors below check them before anyone
// reads them, so a handler that changes a shape is caught where the shape is read, not guessed at.

const Addresses = Type.Array(Address);

/** An email's people, thread and flags. */
export const MailMeta = Type.Object({
  from: Addresses,
  to: Addresses,
  cc: Addresses,
  bcc: Addresses,
  /** The conversation the message belongs to (ingest's threading rule). */
  threadKey: Type.String(),
  spam: Type.Boolean(),
  flags: Type.Object({ read: Type.Boolean(), starred: Type.Boolean() }),
});
export type MailMeta = Static<typeof MailMeta>;

/** A PDF page as a range of the item's text (pages are joined by blank lines; numbered from 1). */
export const PageRange = Type.Object({
  page: Type.Integer({ minimum: 1 }),
  start: Type.Integer({ minimum: 0 }),
  end: Type.Integer({ minimum: 0 }),
});
export type PageRange = Static<typeof PageRange>;

/** A Markdown document: its front matter, [[links]] and #tags, parsed once by the ingest handler. */
export const MarkdownMeta = Type.Object({
  format: Type.Literal('markdown'),
  filename: Type.Union([Type.String(), Type.Null()]),
  frontMatter: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  links: Type.Array(WikiLink),
  tags: Type.Array(Type.String()),
});
export type MarkdownMeta = Static<typeof MarkdownMeta>;

const PdfMeta = Type.Object({ format: Type.Literal('pdf'), pages: Type.Array(PageRange) });

const mail = compile(MailMeta);
const markdown = compile(MarkdownMeta);
const pdf = compile(PdfMeta);

type ItemData = DataOf<typeof ItemIngested>;

/** An email's meta, checked; null for any other item (or a meta not of that shape). */
export function mailMetaOf(data: ItemData): MailMeta | null {
  return data.kind === 'email' && mail.check(data.meta) ? data.meta : null;
}

/** A Markdown document's meta, checked; null for any other item. */
export function markdownMetaOf(data: ItemData): MarkdownMeta | null {
  return data.kind === 'document' && markdown.check(data.meta) ? data.meta : null;
}

/** A PDF's pages, of a PDF document or paper or a PDF attachment read as a document; null for anything else. */
export function pdfPagesOf(data: ItemData): PageRange[] | null {
  const document =
    data.kind === 'attachment' ? data.meta['document'] : ['document', 'paper'].includes(data.kind) ? data.meta : null;
  return pdf.check(document) ? document.pages : null;
}
