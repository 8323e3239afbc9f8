import path from 'node:path';
import { MEDIA_FILE_TYPES, typeOfFileName } from '@memex/contracts';
import { files as fileTree, inArchive, type FileStat } from './files.js';
import { gunzippedHead, isGzip } from './gzip.js';
import { maildirMessage } from './maildir.js';
import { UnreadableZip, ZipArchives } from './zip.js';

/**
 * The types of files a folder import sends (to the document, mail, calendar and contacts
 * handlers), as their names give them; ingest's handler tests check that each type those handlers
 * take is here, a data type (`FOLDER_DATA_TYPES`), or one no file name gives.
 */
export const FOLDER_DOCUMENT_TYPES: ReadonlySet<string> = new Set([
  'application/pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'text/markdown',
  'text/plain',
  'text/csv',
  'text/tab-separated-values',
  'application/x-tex',
  'application/x-latex',
  'text/x-bibtex',
  'text/x-org',
  'text/html',
  'multipart/related',
  'application/x-webarchive',
  'application/xhtml+xml',
  'text/x-rst',
  'application/rtf',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.oasis.opendocument.text',
  'application/vnd.oasis.opendocument.spreadsheet',
  'application/vnd.oasis.opendocument.presentation',
  'application/epub+zip',
  'application/msword',
  'application/vnd.ms-excel',
  'application/vnd.ms-powerpoint',
  'application/vnd.apple.pages',
  'application/vnd.apple.numbers',
  'application/vnd.apple.keynote',
  'application/x-ipynb+json',
  'message/rfc822',
  'application/vnd.ms-outlook',
  'message/x-emlx',
  'text/calendar',
  'text/vcard',
]);
const MEDIA_TYPES = new Set(Object.values(MEDIA_FILE_TYPES));
/**
 * An mbox (`.mbox`, or Thunderbird's `Inbox` by its content): no handler takes it whole; a folder
 * import that lists it (see `listFolder`) sends its messages.
 */
export const MBOX_TYPE = 'application/mbox';
/**
 * Files the document handler reads when sent (a mail's JSON or XML attachment) but a folder import
 * passes over: in a folder they are machine data — settings, exports, the JSON a photo export
 * writes beside every photo — far more often than anyone's writing.
 */
export const FOLDER_DATA_TYPES: ReadonlySet<string> = new Set([
  'application/json',
  'application/xml',
  'text/xml',
  'text/yaml',
]);

/** Outlook's data files (`Documents/Outlook Files/*.pst` on Windows), which `memex import pst` reads. */
const OUTLOOK_DATA_FILE = /^(pst|ost)$/;
/**
 * An Outlook data file (.pst, .ost): no handler takes it whole; a folder import that lists it (see
 * `listFolder`) sends its items.
 */
export const OUTLOOK_DATA_TYPE = 'application/vnd.ms-outlook-pst';

/** An Evernote export (.enex): no handler takes it whole; a folder import that lists it sends its notes (see enex.ts). */
export const EVERNOTE_TYPE = 'application/enex+xml';

/** A file that is not sent, and why: every file under a root is either sent or one of these. */
export interface SkippedFile {
  key: string;
  reason: string;
}

export interface FolderFile {
  /** Path relative to the folder, with `/`: the item's external_id. */
  key: string;
  file: string;
  /** The MIME type its handler reads it as. */
  type: string;
  size: number;
  modified: string;
  /** Changes when the file does: a changed file is sent again (and comes back `updated`). */
  version: string;
}

/** A single saved message (.eml, Outlook's .msg, Apple Mail's .emlx): the mail handler reads it, with its folder and time, never a file name. */
export function isMessageFile(type: string): boolean {
  return type === 'message/rfc822' || type === 'application/vnd.ms-outlook' || type === 'message/x-emlx';
}

/**
 * What a file of a folder carries besides its bytes (`key`: its path in the folder, with `/`): a
 * document its name and time; a saved message its time and folder label, never a name (the mail
 * handler takes none); a Maildir's message its Maildir folder, flags and delivery time.
 */
export function fileAttributes(type: string, key: string, modified: string): Record<string, unknown> {
  if (!isMessageFile(type)) return { filename: key.slice(key.lastIndexOf('/') + 1), modified };
  const maildir = maildirMessage(key);
  if (maildir) {
    const { folder, read, starred, received } = maildir;
    return { modified, folder, read, starred, ...(received ? { received } : {}) };
  }
  const folder = messageFolderOf(key);
  return { modified, ...(folder ? { folder } : {}) };
}

/** A folder's name in a label: a zip read as a folder is named without its `.zip` (`Old mail.zip/Work` is `Old mail/Work`). */
export const zipAsFolder = (name: string): string => name.replace(/\.zip$/i, '');

/** A mailbox folder of Apple Mail's store (`Work.mbox`), which keeps its messages some folders further down. */
const APPLE_MAILBOX = /^(.+)\.mbox$/i;

/**
 * The folder label of a single saved message at `key` (a path relative to what is imported or
 * watched, with `/`), or none at the top. Apple Mail keeps a mailbox's messages under
 * `Work.mbox/Projects.mbox/<id>/Data/1/Messages/12.emlx`: their folder is the mailboxes
 * (`Work/Projects`), not `Messages`; any other file's is the folder it sits in.
 */
export function messageFolderOf(key: string): string | undefined {
  const folders = key.split('/').slice(0, -1).map(zipAsFolder);
  const mailboxes = folders.flatMap((name) => APPLE_MAILBOX.exec(name)?.[1] ?? []);
  if (mailboxes.length > 0) return mailboxes.join('/');
  return folders.length > 0 ? folders.join('/') : undefined;
}

/** A regular file met by `walkFolder`: its path, its path in the folder (with `/`), and its size and time. */
export interface WalkedFile {
  file: string;
  key: string;
  name: string;
  stat: FileStat;
}

/**
 * A page saved "complete" by a browser (or Office's "Save as Web Page") keeps its images, scripts
 * and styles in a folder named after it, beside it: `Page_files/` for `Page.html`, localised by
 * Internet Explorer and Office (`Seite-Dateien/`, `Page_fichiers/`). They are parts of the page,
 * not photos or documents of their own.
 */
const SAVED_PAGE_FOLDER =
  /^(.+?)(?:_files|-Dateien|_fichiers|_archivos|_arquivos|_bestanden|_file|-filer|_tiedostot|_pliki|_soubory)$/;
const PAGE_EXTENSIONS = ['html', 'htm', 'xhtml', 'shtml', 'mht', 'mhtml'];

/** The saved page (a sibling's name) whose resources a folder holds, or null: `has` tells whether a sibling exists. */
export function savedPageOf(folder: string, has: (sibling: string) => boolean): string | null {
  const base = SAVED_PAGE_FOLDER.exec(folder)?.[1];
  if (!base) return null;
  for (const extension of PAGE_EXTENSIONS)
    for (const name of [`${base}.${extension}`, `${base}.${extension.toUpperCase()}`]) if (has(name)) return name;
  return null;
}

/** A zip file, which a walk given `FolderArchives` reads as the folder it unpacks to. */
export const ZIP_FILE = /\.zip$/i;
/** What macOS's Archive Utility adds to a zip: each file's resource fork and attributes (`._name`). */
const MACOS_ZIP_FOLDER = '__MACOSX';

/**
 * The zip files a walk met, read as folders at their own paths (`old-projects.zip/report.pdf`)
 * while they stay open: `close` once their files are read.
 */
export class FolderArchives {
  private readonly opened: ZipArchives[] = [];

  async open(file: string): Promise<ZipArchives> {
    const archives = await ZipArchives.open([file]);
    this.opened.push(archives);
    return archives;
  }

  close(): void {
    for (const archives of this.opened.splice(0)) archives.close();
  }
}

/**
 * Every regular file under a folder, in a stable order (names sorted, depth first), for `take` to
 * keep or skip with a reason; hidden files and folders, what is not a regular file and the
 * resources of a saved web page are skipped here, so that an import accounts for every entry.
 * Given `archives`, a zip file is walked as a folder (a zip inside a zip is skipped, saying so).
 */
export async function walkFolder(
  root: string,
  take: (file: WalkedFile, skip: (reason: string) => void) => Promise<void> | void,
  archives?: FolderArchives,
): Promise<SkippedFile[]> {
  const skipped: SkippedFile[] = [];
  const visitZip = async (file: string, key: string) => {
    const skip = (reason: string) => skipped.push({ key, reason });
    if (inArchive(file)) return void skip('a zip inside a zip: unpack it to read it');
    const opened = await archives!.open(file).catch((error: unknown) => {
      if (error instanceof UnreadableZip) return error;
      throw error;
    });
    if (opened instanceof UnreadableZip) return void skip(`a zip archive, but ${opened.reason}`);
    for (const member of opened.skipped) skipped.push({ key: `${key}/${member.key}`, reason: member.reason });
    await visit(file, null);
  };
  const visit = async (dir: string, partOf: string | null, sent: string | null = null) => {
    const entries = (await fileTree.list(dir)).sort((a, b) => (a.name < b.name ? -1 : 1));
    const names = new Set(entries.map((entry) => entry.name));
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      const key = path.relative(root, full).split(path.sep).join('/');
      const skip = (reason: string) => skipped.push({ key, reason });
      if (full === sent) continue;
      if (entry.name.startsWith('.')) skip(entry.isDirectory() ? 'a hidden folder (not read)' : 'a hidden file');
      else if (entry.isDirectory() && entry.name === MACOS_ZIP_FOLDER)
        skip("macOS's resource forks of a zip's files (not files of their own; not read)");
      else if (entry.isDirectory() && !partOf && IWORK_PACKAGE.test(entry.name) && (await packageIndex(full))) {
        // A Pages, Numbers or Keynote document saved as a package (a folder anywhere but a Mac): its
        // Index.zip is the document, sent under the package's name; its previews and images are its parts.
        const index = path.join(full, 'Index.zip');
        await take({ file: index, key, name: entry.name, stat: await fileTree.stat(index) }, skip);
        await visit(full, `a part of the document ${key}`, index);
      } else if (entry.isDirectory()) {
        const page = partOf ? null : savedPageOf(entry.name, (sibling) => names.has(sibling));
        const pageKey = page ? path.posix.join(path.posix.dirname(key), page) : null;
        await visit(full, partOf ?? (pageKey ? `a part of the saved web page ${pageKey}` : null));
      } else {
        // A link to a file is read as that file; one to a folder is not followed (it may lead in a circle).
        const linked = entry.isSymbolicLink?.() ? await fileTree.stat(full).catch(() => null) : undefined;
        if (linked === null) skip('a link whose target is gone');
        else if (linked?.isDirectory()) skip('a link to a folder (not followed: it may lead in a circle)');
        else if (!entry.isFile() && !linked?.isFile()) skip('not a regular file');
        else if (partOf) skip(partOf);
        else if (archives && ZIP_FILE.test(entry.name)) await visitZip(full, key);
        else await take({ file: full, key, name: entry.name, stat: linked ?? (await fileTree.stat(full)) }, skip);
      }
    }
  };
  await visit(root, null);
  return skipped;
}

/** A folder that is an iWork document saved as a package (`Letter.pages/`, with its `Index.zip`). */
const IWORK_PACKAGE = /\.(pages|numbers|key)$/i;

const packageIndex = async (dir: string) =>
  (await fileTree.stat(path.join(dir, 'Index.zip')).catch(() => null))?.isFile() ?? false;

/** Header fields of mail (RFC 5322, and the X-From/X-To of the Enron corpus): two of them make a header mail's. */
const MAIL_FIELD =
  /^(from|sender|to|cc|subject|date|message-id|in-reply-to|references|received|return-path|delivered-to|mime-version|x-from|x-to):/i;
/**
 * A header field's first line (`Name: value`): what a message starts with, what follows an mbox's
 * separator, and almost never a body's `From ` line.
 */
export const HEADER_FIELD = /^[\x21-\x39\x3b-\x7e]+[ \t]*:/;
/** How much of a file is read to tell its type. */
const SNIFF_BYTES = 4096;

/**
 * A file's type: its name's, else, for a name that tells none (the Enron corpus's `1.`, an MH
 * folder's `17`, a Maildir's `1262304001.M1P1.host:2,S`, a download saved without its extension),
 * what its first bytes show: a PDF by its signature, a message by a header of mail fields, an
 * mbox (Thunderbird's `Inbox`) by a `From ` line before one; a `.gz` is an mbox when it
 * decompresses to one. Null when neither tells.
 */
export async function typeOfFile(file: string, name = path.basename(file)): Promise<string | null> {
  const named = typeOfFileName(name);
  if (named === GZIP_TYPE) return (await sniffedType(file)) ?? named;
  // `.key` is Keynote's, and a TLS or SSH private key's: only a zip is a presentation.
  if (named && ZIPPED_BY_NAME.has(named) && !(await fileTree.head(file, 4)).equals(ZIP_SIGNATURE)) return null;
  return named ?? (await sniffedType(file));
}

/** Types a file's name gives that are zips (Apple's iWork documents), and a zip's first bytes. */
const ZIPPED_BY_NAME = new Set([
  'application/vnd.apple.keynote',
  'application/vnd.apple.pages',
  'application/vnd.apple.numbers',
]);
const ZIP_SIGNATURE = Buffer.from('PK\x03\x04', 'latin1');

/** A `.gz` file: read when it is a gzipped mbox (`.mbox.gz`, pipermail's `2009-January.txt.gz`). */
const GZIP_TYPE = 'application/gzip';

/** What a file's first bytes show it is; a gzipped one an mbox or nothing (no handler takes the rest gzipped). */
async function sniffedType(file: string): Promise<string | null> {
  if (!(await isGzip(file))) return typeOfHead(await fileTree.head(file, SNIFF_BYTES));
  return typeOfHead(await gunzippedHead(file, SNIFF_BYTES)) === MBOX_TYPE ? MBOX_TYPE : null;
}

/** A PDF by its signature; a message, or an mbox, by a header of mail fields (after its `From ` line). */
function typeOfHead(head: Buffer): string | null {
  if (head.subarray(0, 5).toString('latin1') === '%PDF-') return 'application/pdf';
  const lines = head.toString('latin1').split(/\r?\n/);
  // An mbox: its first message's `From ` line, then that message's header.
  const mbox = /^(\xef\xbb\xbf)?From \S/.test(lines[0]!);
  if (mbox) lines.shift();
  const blank = lines.indexOf('');
  // A header longer than what was read is judged by its start, without the line the read cut.
  const header = blank >= 0 ? lines.slice(0, blank) : head.length < SNIFF_BYTES ? lines : lines.slice(0, -1);
  const fields = header.filter((line) => !/^[ \t]/.test(line));
  if (fields.length === 0 || !fields.every((line) => HEADER_FIELD.test(line))) return null;
  if (fields.filter((line) => MAIL_FIELD.test(line)).length < 2) return null;
  return mbox ? MBOX_TYPE : 'message/rfc822';
}

/**
 * Why a file of a folder is not sent: a data file, or a file another command reads (an Outlook
 * data file, an Outlook for Mac archive; an Evernote export or a zip where they are not read, as
 * by `memex import photos`: a folder import and a watched folder read both), else that no
 * handler takes its type. `type`: what its name or first bytes say.
 */
export function passedOverReason(name: string, type: string | null): string {
  const extension = path.extname(name).slice(1).toLowerCase();
  if (type && FOLDER_DATA_TYPES.has(type))
    return `a data file (.${extension}): settings, exports and photo sidecars are not imported from folders`;
  if (OUTLOOK_DATA_FILE.test(extension)) return 'an Outlook data file: memex import pst reads it';
  if (extension === 'olm') return 'an Outlook for Mac archive: memex import olm reads it';
  if (extension === 'enex') return 'an Evernote export: memex import folder and a watched folder read its notes';
  if (ZIP_FILE.test(name))
    return 'a zip archive: memex import folder and a watched folder read it as the folder it unpacks to';
  return extension ? `no handler takes .${extension} files` : 'no extension to tell its type';
}

/**
 * Every file under a folder, in a stable order: the ones of the `accepted` types (those a handler
 * of the server takes; mboxes, Outlook data files and Evernote exports too where the caller reads
 * them, `MBOX_TYPE`, `OUTLOOK_DATA_TYPE`, `EVERNOTE_TYPE`), and the rest skipped
 * with the reason (hidden files and folders, types nothing reads), so that an import accounts for
 * every file. A file's type is its name's, else what its first bytes show (see `typeOfFile`).
 */
export async function listFolder(
  root: string,
  accepted: ReadonlySet<string>,
  archives?: FolderArchives,
): Promise<{ files: FolderFile[]; skipped: SkippedFile[] }> {
  const files: FolderFile[] = [];
  const skipped = await walkFolder(
    root,
    async ({ file, key, name, stat }, skip) => {
      const extension = path.extname(name).slice(1).toLowerCase();
      const named = OUTLOOK_DATA_FILE.test(extension)
        ? OUTLOOK_DATA_TYPE
        : extension === 'enex'
          ? EVERNOTE_TYPE
          : await typeOfFile(file, name);
      const readable = (type: string) =>
        FOLDER_DOCUMENT_TYPES.has(type) ||
        MEDIA_TYPES.has(type) ||
        type === MBOX_TYPE ||
        type === OUTLOOK_DATA_TYPE ||
        type === EVERNOTE_TYPE;
      const type = named && readable(named) ? named : null;
      if (!type || !accepted.has(type) || FOLDER_DATA_TYPES.has(type)) {
        skip(passedOverReason(name, named));
        return;
      }
      files.push({
        key,
        file,
        type,
        size: stat.size,
        modified: stat.mtime.toISOString(),
        version: `${key}\t${stat.size}\t${stat.mtimeMs}`,
      });
    },
    archives,
  );
  return { files, skipped };
}
