import { createHash } from 'node:crypto';
import { sha256 } from '@memex/blobs';
import type { DocumentMeta as EventDocumentMeta, KindAndMeta, PdfMeta } from '@memex/contracts';
import type { DocumentMeta, PdfFields, ParsedItem } from '../domain/handlers/index.js';
import type { ItemSource, PreparedItem } from './prepare.js';

/** One item to store: a top-level item or one of its attachments, with its blobs. */
export interface ItemRecord {
  id: string;
  parentId: string | null;
  title: string;
  identity: string;
  contentType: string;
  /** The bytes to store as its blob (none for a located item: they stay at the location). */
  content: Buffer;
  contentSha256: string;
  size: number;
  /** Where the content lives when it is not stored as a blob (the top-level item of an in-place file). */
  location: string | null;
  text: Buffer;
  textSha256: string;
  textLength: number;
  occurredAt: string | null;
  /** Its kind and the meta item.ingested carries for it. */
  typed: KindAndMeta;
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * A child's id, derived from its parent's id and its position: a valid ULID (the parent's time
 * part, then 80 bits of a hash), the same every time the same item is stored, so that completing
 * an interrupted item writes the same children.
 */
export function childId(parentId: string, position: number): string {
  const digest = createHash('sha256').update(`${parentId}/${position}`).digest();
  let random = '';
  for (let i = 0; i < 16; i++) random += CROCKFORD[digest[i]! & 31];
  return parentId.slice(0, 10) + random;
}

/** PDF pages as offsets into the text (pages joined by blank lines), instead of a second copy of the text. */
function pdfOffsets(meta: DocumentMeta & PdfFields, text: string): PdfMeta {
  let at = 0;
  const pages = meta.pages.map(({ page, text: pageText }) => {
    if (pageText === '') return { page, start: at, end: at };
    const range = { page, start: at, end: at + pageText.length };
    at = range.end + 2;
    return range;
  });
  if (at - 2 > text.length) throw new Error('PDF page offsets do not match its text');
  return { ...meta, pages };
}

function pageOffsets(meta: DocumentMeta, text: string): EventDocumentMeta {
  return meta.format === 'pdf' ? pdfOffsets(meta, text) : meta;
}

/**
 * What an event carries as meta, by kind: the handler's meta, slimmed where it would repeat the
 * text, with what any item's meta may say (`common`: warnings, undated).
 */
function eventMeta(
  item: ParsedItem,
  children: ItemRecord[],
  common: { warnings?: string[]; undated?: boolean },
): KindAndMeta {
  switch (item.kind) {
    case 'email':
      return {
        kind: item.kind,
        meta: {
          ...item.meta,
          attachments: children.map((c) => ({
            id: c.id,
            filename: c.typed.kind === 'attachment' ? c.typed.meta.filename : null,
            content_type: c.contentType,
            size: c.size,
          })),
          ...common,
        },
      };
    case 'document':
      return { kind: item.kind, meta: { ...pageOffsets(item.meta, item.text), ...common } };
    case 'paper':
      // document/paper.ts makes only PDFs papers.
      if (item.meta.format !== 'pdf') throw new Error(`a paper must be a PDF, not ${item.meta.format}`);
      return { kind: item.kind, meta: { ...pdfOffsets(item.meta, item.text), ...common } };
    case 'attachment': {
      const document = item.meta.document ? pageOffsets(item.meta.document, item.text) : null;
      return { kind: item.kind, meta: { ...item.meta, document, ...common } };
    }
    case 'photo':
      return { kind: item.kind, meta: { ...item.meta, ...common } };
    case 'video':
    case 'audio':
      return { kind: item.kind, meta: { ...item.meta, ...common } };
    case 'event':
      return { kind: item.kind, meta: { ...item.meta, ...common } };
    case 'session_digest':
    case 'web':
      return item.meta.format === 'session_digest'
        ? { kind: 'session_digest', meta: { ...item.meta, ...common } }
        : { kind: 'web', meta: { ...item.meta, ...common } };
    case 'contact':
      return {
        kind: item.kind,
        meta: {
          ...item.meta,
          // A photo names its item (its blob) now that the child has an id.
          cards: item.meta.cards.map((card) => ({
            ...card,
            photos: card.photos.map(({ child, ...photo }) => ({
              ...photo,
              item: child === null ? null : (children[child]?.id ?? null),
            })),
          })),
          ...common,
        },
      };
  }
}

function record(
  id: string,
  parentId: string | null,
  item: ParsedItem,
  content: Buffer,
  contentType: string,
  children: ItemRecord[],
): ItemRecord {
  const text = Buffer.from(item.text, 'utf8');
  // The envelope's occurred_at is required (the log's time stands in): `undated` says it is no fact.
  const common = {
    ...(item.warnings.length > 0 ? { warnings: item.warnings } : {}),
    ...(item.occurredAt === null ? { undated: true } : {}),
  };
  return {
    id,
    parentId,
    title: item.title,
    identity: item.identity,
    contentType,
    content,
    contentSha256: sha256(content),
    size: content.length,
    location: null,
    text,
    textSha256: sha256(text),
    textLength: item.text.length,
    occurredAt: item.occurredAt,
    typed: eventMeta(item, children, common),
  };
}

/**
 * The item and its attachments (depth first, nested attachments too) as records, children
 * first: the top-level item is stored last, so once it exists, all of it exists.
 */
export function itemRecords(prepared: PreparedItem, id: string): ItemRecord[] {
  const out: ItemRecord[] = [];
  let position = 0;
  const visit = (
    item: ParsedItem,
    itemId: string,
    parentId: string | null,
    content: Buffer,
    contentType: string,
  ): ItemRecord => {
    const direct: ItemRecord[] = [];
    for (const child of item.children ?? []) {
      const bytes = child.contentBytes ?? Buffer.alloc(0);
      const type = child.kind === 'attachment' ? child.meta.contentType : 'application/octet-stream';
      direct.push(visit(child, childId(id, position++), itemId, bytes, type));
    }
    const own = record(itemId, parentId, item, content, contentType, direct);
    out.push(own);
    return own;
  };
  const { original } = prepared;
  const top = visit(
    prepared.parsed,
    id,
    null,
    Buffer.isBuffer(original) ? original : Buffer.alloc(0),
    prepared.contentType,
  );
  top.location = prepared.location;
  // A file its worker extracted: the memex never had its bytes, only their digest.
  if (!Buffer.isBuffer(original)) Object.assign(top, { contentSha256: original.sha256, size: original.size });
  return out;
}

/** A source as events and accounts name it: `import:mbox:archive-2009`. */
export function sourceName(source: ItemSource): string {
  return source.id ? `${source.kind}:${source.id}` : source.kind;
}
