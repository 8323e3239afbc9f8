import { RejectedItem } from '../handler.js';
import { binaryOfficeFormatOf } from './binary-office/index.js';
import { looksLikeWebArchive, WEBARCHIVE_TYPE } from './webarchive.js';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const PPTX = 'application/vnd.openxmlformats-officedocument.presentationml.presentation';

const COMPOUND_FILE = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const ZIP = Buffer.from('PK\u0003\u0004', 'latin1');

const BINARY_OFFICE_TYPES = {
  doc: 'application/msword',
  xls: 'application/vnd.ms-excel',
  ppt: 'application/vnd.ms-powerpoint',
} as const;

/**
 * The document type a file's own bytes prove, whatever it was labelled: a PDF, RTF, an Office
 * 97–2003 compound file, an Office Open XML, OpenDocument or EPUB zip. Mail is full of labels that
 * lie: Word's RTF sent as application/msword, a .docx as application/octet-stream or
 * application/x-zip. Null when the bytes prove none of these (plain text and HTML prove nothing);
 * a password-protected .docx/.xlsx/.pptx (a compound file holding the encrypted zip) is rejected.
 */
export function provenDocumentType(bytes: Buffer): string | null {
  // A web archive starts with its own magic: a PDF it holds is its page's data, not what it is.
  if (looksLikeWebArchive(bytes)) return WEBARCHIVE_TYPE;
  const head = bytes.subarray(0, 1024).toString('latin1');
  if (head.includes('%PDF-')) return 'application/pdf';
  if (/^\s*\{\\rtf/.test(head)) return 'application/rtf';
  if (bytes.subarray(0, 8).equals(COMPOUND_FILE)) {
    const format = binaryOfficeFormatOf(bytes);
    if (format === 'encrypted')
      throw new RejectedItem('a password-protected Office document: its content is encrypted (an EncryptedPackage)');
    return format ? BINARY_OFFICE_TYPES[format] : null;
  }
  if (bytes.length > 30 && bytes.subarray(0, 4).equals(ZIP)) return zipDocumentType(bytes);
  return null;
}

/** A zip's document type by the parts it names (OOXML) or the `mimetype` entry it starts with (OpenDocument, EPUB). */
function zipDocumentType(bytes: Buffer): string | null {
  // An OpenDocument or EPUB zip stores `mimetype` first, uncompressed: its bytes follow the name.
  if (bytes.readUInt16LE(26) === 8 && bytes.toString('latin1', 30, 38) === 'mimetype') {
    const size = bytes.readUInt32LE(18);
    const start = 30 + 8 + bytes.readUInt16LE(28);
    const type = bytes.toString('latin1', start, start + Math.min(size, 100)).trim();
    if (/^application\/(vnd\.oasis\.opendocument\.(text|spreadsheet|presentation)|epub\+zip)$/.test(type)) return type;
  }
  if (bytes.includes('word/document.xml')) return DOCX;
  if (bytes.includes('xl/workbook.xml')) return XLSX;
  if (bytes.includes('ppt/presentation.xml')) return PPTX;
  return null;
}

/** Text that is an HTML page: what "Save as Web Page" and many "export to Excel" buttons give a .doc or .xls. */
export function looksLikeHtml(bytes: Buffer): boolean {
  const head = bytes
    .subarray(0, 2048)
    .toString('latin1')
    .replace(/^\uFEFF|^\xEF\xBB\xBF/, '');
  return /^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<(!doctype\s+html|html|head|body|table|meta)\b/i.test(head);
}
