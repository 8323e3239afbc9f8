import { Type } from '@sinclair/typebox';
import { safeFileName, typeOfFileName } from '@memex/contracts';
import { isContactsCsv } from '@memex/icalendar';
import {
  baseType,
  RejectedItem,
  type ContactItem,
  type DocumentItem,
  type FormatFields,
  type HandlerInput,
  type IngestHandler,
} from '../handler.js';
import { charsetParam, decodeText, firstLine, sha256Hex } from '../text.js';
import { plausibleDate } from '../normalize.js';
import type { FormatResult } from './format.js';
import { parseDocx } from './docx.js';
import { parseHtml } from './html.js';
import { parseMarkdown } from './markdown.js';
import { parsePdf } from './pdf.js';
import { paperOf } from './paper.js';
import { parseRst } from './rst.js';
import { parseRtf } from './rtf.js';
import { parseOffice } from './office.js';
import { parseBinaryOffice } from './binary-office/index.js';
import { looksLikeHtml, provenDocumentType } from './sniff.js';
import { looksLikeMhtml, parseMhtml } from './mhtml.js';
import { parseContacts } from '../contacts/contacts-handler.js';
import { parseWebArchive, WEBARCHIVE_TYPE } from './webarchive.js';
import { parseIwork, type IworkFormat } from './iwork.js';
import { NOTEBOOK_TYPE, parseNotebook } from './notebook.js';

/** The largest document taken (a scanned book fits; a request carrying it is the gateway's limit). */
export const DOCUMENT_LIMIT_BYTES = 100 * 1024 * 1024;

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/** How a type is read: as a format of its own, or (a saved web archive) as the page it holds. */
type Reader = Exclude<FormatFields['format'], 'iwork'> | 'mhtml' | 'webarchive' | IworkFormat;

/** Accepted types and the reader of each. */
const FORMATS: Record<string, Reader> = {
  'application/pdf': 'pdf',
  [DOCX]: 'docx',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/plain': 'text',
  // Text by another name: data, markup and notes read for their words as they are.
  'text/csv': 'text',
  'text/tab-separated-values': 'text',
  'application/json': 'text',
  'application/xml': 'text',
  'text/xml': 'text',
  'text/yaml': 'text',
  'application/x-tex': 'text',
  'application/x-latex': 'text',
  'text/x-bibtex': 'text',
  'text/x-org': 'text',
  'text/html': 'html',
  'multipart/related': 'mhtml',
  [WEBARCHIVE_TYPE]: 'webarchive',
  'application/vnd.apple.pages': 'pages',
  'application/vnd.apple.numbers': 'numbers',
  'application/vnd.apple.keynote': 'keynote',
  'application/xhtml+xml': 'html',
  'text/x-rst': 'rst',
  'text/prs.fallenstein.rst': 'rst',
  'application/rtf': 'rtf',
  'text/rtf': 'rtf',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
  'application/vnd.oasis.opendocument.text': 'opendocument',
  'application/vnd.oasis.opendocument.spreadsheet': 'opendocument',
  'application/vnd.oasis.opendocument.presentation': 'opendocument',
  'application/epub+zip': 'epub',
  'application/msword': 'doc',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.ms-powerpoint': 'ppt',
  [NOTEBOOK_TYPE]: 'notebook',
};

/** Types mail clients use when they do not know (or say) what a file is. */
const GENERIC = new Set([
  'application/octet-stream',
  'application/x-download',
  'application/force-download',
  'binary/octet-stream',
  'application/download',
]);

/**
 * The document type to read an attachment as: its own type when the handler reads it; for a
 * generic type (octet-stream), an unknown application type (application/x-msword) or text/plain,
 * the type its file extension names, else (but for text/plain) the type its bytes prove; else null.
 */
export function documentTypeFor(contentType: string, filename: string | null, bytes?: Buffer): string | null {
  if (FORMATS[contentType] && contentType !== 'text/plain') return contentType;
  const unsure = GENERIC.has(contentType) || contentType === 'text/plain' || contentType.startsWith('application/');
  if (!unsure) return null;
  const byExtension = filename ? typeOfFileName(filename) : null;
  if (byExtension && FORMATS[byExtension]) return byExtension;
  if (contentType === 'text/plain') return contentType;
  return bytes ? provenDocumentType(bytes) : null;
}

/**
 * The type a document is read as: the one its bytes prove when they prove one (Word's RTF
 * labelled application/msword), an Office 97–2003 label on a web archive, an HTML page or plain
 * text read as that (Word's "Single File Web Page", "export to Excel" buttons), else its label.
 */
function typeToRead(labelled: string, bytes: Buffer): string {
  const proven = provenDocumentType(bytes);
  // Text that mentions `%PDF-` near its start is still text: a text label gives way only to bytes that are not text.
  const head = bytes.subarray(0, 1024).toString('latin1');
  if (proven && (!labelled.startsWith('text/') || head.includes('\0') || /^(%PDF-|\{\\rtf)/.test(head))) return proven;
  const format = FORMATS[labelled];
  const binary = head.includes('\0');
  if ((format === 'doc' || format === 'xls' || format === 'ppt') && !binary)
    return looksLikeMhtml(bytes) ? 'multipart/related' : looksLikeHtml(bytes) ? 'text/html' : 'text/plain';
  return labelled;
}

export const documentAttributesSchema = Type.Object(
  {
    filename: Type.Optional(
      Type.String({ minLength: 1, description: "The file's name; the title when the document has none." }),
    ),
    title: Type.Optional(
      Type.String({ minLength: 1, description: 'A title that overrides the one found in the document.' }),
    ),
    url: Type.Optional(
      Type.String({
        format: 'uri',
        description: 'Where the document came from (a web page); relative canonical links resolve against it.',
      }),
    ),
    modified: Type.Optional(
      Type.String({
        format: 'date-time',
        description: "When the file was last changed; the document's date when it states none itself.",
      }),
    ),
  },
  { additionalProperties: false },
);

interface DocumentAttributes {
  filename?: string;
  title?: string;
  url?: string;
  modified?: string;
}

/** Plain text: decoded (BOM, declared charset, UTF-8, else windows-1252); binary data is refused. */
function parseText(bytes: Buffer, declared: string | null): FormatResult<FormatFields> {
  const { text, charset } = decodeText(bytes, declared);
  if (text.includes('\0')) throw new RejectedItem('not plain text: it contains binary data (NUL bytes)');
  return {
    title: null,
    text: text.replace(/^\uFEFF/, '').trim(),
    occurredAt: null,
    fields: { format: 'text', charset },
    warnings: [],
  };
}

async function readFormat(
  format: Reader,
  bytes: Buffer,
  type: string,
  url: string | null,
): Promise<FormatResult<FormatFields>> {
  const declared = charsetParam(type);
  switch (format) {
    case 'pdf':
      return parsePdf(bytes);
    case 'docx':
      return parseDocx(bytes);
    case 'html':
      return parseHtml(bytes, declared, url);
    case 'mhtml':
      return parseMhtml(bytes, url);
    case 'webarchive':
      return parseWebArchive(bytes);
    case 'pages':
    case 'numbers':
    case 'keynote':
      return parseIwork(bytes, format);
    case 'text':
      return parseText(bytes, declared);
    case 'markdown':
      return parseMarkdown(decodeText(bytes, declared).text);
    case 'rst':
      return parseRst(decodeText(bytes, declared).text);
    case 'rtf':
      return parseRtf(bytes);
    case 'xlsx':
    case 'pptx':
    case 'opendocument':
    case 'epub':
      return parseOffice(bytes, format);
    case 'doc':
    case 'xls':
    case 'ppt':
      return parseBinaryOffice(bytes, format);
    case 'notebook':
      return parseNotebook(bytes);
  }
}

/**
 * Any supported document to a document item. Title: the `title` attribute, else the document's
 * own (PDF Title, first heading, front matter, <title>), else the file name, else the first line.
 * Date: the document's own when plausible (a PDF dated 0000-01-01 is not), else the `modified` attribute.
 */
export async function parseDocument({ bytes, type, attributes }: HandlerInput): Promise<DocumentItem> {
  const attrs = attributes as DocumentAttributes;
  const labelled = baseType(type);
  if (!FORMATS[labelled]) throw new RejectedItem(`no document reader for type "${labelled}"`);
  const contentType = typeToRead(labelled, bytes);
  const format = FORMATS[contentType]!;
  const url = attrs.url ?? null;
  const result = await readFormat(format, bytes, contentType === labelled ? type : contentType, url);
  if (contentType !== labelled) result.warnings.unshift(`labelled ${labelled} but is ${contentType}: read as that`);
  const canonical = result.fields.format === 'html' ? result.fields.canonicalUrl : null;
  const paper = result.fields.format === 'pdf' ? paperOf(result.fields, result.text) : null;
  return {
    kind: paper ? 'paper' : 'document',
    identity: paper?.identity ?? `sha256:${sha256Hex(bytes)}`,
    ...(paper?.aliases.length ? { aliases: paper.aliases } : {}),
    // A title made from a file name is its safe base name; meta.filename keeps the name as it arrived.
    title: attrs.title ?? result.title ?? safeFileName(attrs.filename) ?? firstLine(result.text) ?? '(untitled)',
    text: result.text,
    occurredAt:
      plausibleDate(result.occurredAt) ?? plausibleDate(attrs.modified ? new Date(attrs.modified).toISOString() : null),
    warnings: result.warnings,
    meta: {
      contentType,
      size: bytes.length,
      filename: attrs.filename ?? null,
      url: url ?? canonical,
      ...result.fields,
      ...(paper ? { paper: paper.ids } : {}),
    },
  };
}

/**
 * A document, or the contacts of an address book exported as CSV (Google Contacts, Outlook,
 * LinkedIn's connections): a contact item, so its people are people, not a table of text.
 */
async function parseDocumentOrContacts(input: HandlerInput): Promise<DocumentItem | ContactItem> {
  if (baseType(input.type) === 'text/csv' && isContactsCsv(decodeText(input.bytes, charsetParam(input.type)).text)) {
    const { filename, title, modified } = input.attributes as DocumentAttributes;
    return parseContacts({ ...input, attributes: { filename, title, modified } });
  }
  return parseDocument(input);
}

export const documentHandler: IngestHandler = {
  name: 'document',
  types: Object.keys(FORMATS),
  attributesSchema: documentAttributesSchema,
  identityRule:
    'Content hash (sha256 of the bytes); a PDF that is a research paper (its own arXiv id or DOI, or a references section) by its arXiv id (an arXiv version naming its DOI also by the DOI), else its DOI, else the content hash. The same source and external_id with new content updates the item.',
  limitBytes: DOCUMENT_LIMIT_BYTES,
  produces: ['document', 'paper', 'contact'],
  updatable: true,
  parse: parseDocumentOrContacts,
};
