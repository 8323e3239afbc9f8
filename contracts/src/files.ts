import { lookup } from 'mime-types';
import { MEDIA_FILE_TYPES } from './api/media.js';

/**
 * Where the memex reads a file extension differently from the shared table (`mime-types`, from
 * mime-db): reStructuredText, Apple Mail's .emlx and BibTeX have no entry there, .mht and .org
 * mean other things there, a Safari web archive has no entry, and a vCard is read as `text/vcard` whatever its extension. Photos and recordings (RAW formats included) come from MEDIA_FILE_TYPES.
 */
const MEMEX_TYPES: Readonly<Record<string, string>> = {
  rst: 'text/x-rst',
  vcf: 'text/vcard',
  // Apple Mail's one-message files: the message behind a length line, with Mail's flags after it.
  emlx: 'message/x-emlx',
  // A web page saved as one file is MIME but no mail (mime-db says message/rfc822): Chrome's type for it.
  mht: 'multipart/related',
  mhtml: 'multipart/related',
  // Safari's Web Archive: a binary property list holding the page (mime-db has no entry).
  webarchive: 'application/x-webarchive',
  // Emacs' Org notes (mime-db: Lotus Organizer) and BibTeX (no entry).
  org: 'text/x-org',
  bib: 'text/x-bibtex',
};

/** The MIME type a file's name says (`report.PDF` → `application/pdf`), or null when it says none. */
export function typeOfFileName(name: string): string | null {
  const extension = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase();
  if (!extension) return null;
  return MEMEX_TYPES[extension] ?? MEDIA_FILE_TYPES[extension] ?? (lookup(extension) || null);
}
