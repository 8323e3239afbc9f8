import { lookup } from 'mime-types';
import { MEDIA_FILE_TYPES } from './api/media.js';

/**
 * Where the memex reads a file extension differently from the shared table (`mime-types`, from
 * mime-db): reStructuredText and Apple Mail's .emlx have no entry there, and a vCard is read as `text/vcard` whatever
 * its extension. Photos and recordings (RAW formats included) come from MEDIA_FILE_TYPES.
 */
const MEMEX_TYPES: Readonly<Record<string, string>> = {
  rst: 'text/x-rst',
  vcf: 'text/vcard',
  // Apple Mail's one-message files: the message behind a length line, with Mail's flags after it.
  emlx: 'message/x-emlx',
};

/** The MIME type a file's name says (`report.PDF` → `application/pdf`), or null when it says none. */
export function typeOfFileName(name: string): string | null {
  const extension = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase();
  if (!extension) return null;
  return MEMEX_TYPES[extension] ?? MEDIA_FILE_TYPES[extension] ?? (lookup(extension) || null);
}
