/**
 * A zip or an Evernote export in a watched folder is read as its members, as an mbox is read as
 * its messages (see mailboxes.ts): each member is a row of the source's files, an item of its own,
 * beside the archive's own row (`mailbox`, with `archive` saying which), which holds the file's
 * size and time. A zip's files are at `<zip path>/<path in the zip>` (`Old.zip/inner/report.pdf`:
 * a folder in the folder); an export's notes at `<export path>#<note>` and their attachments at
 * `<export path>#<note>/<file name>`, a note known by when it was made (see readEnex), so the same
 * note in a newer export of the notebook is the same item, edited or not.
 */

export type ArchiveKind = 'zip' | 'enex';

const ZIP = /\.zip$/i;
const ENEX = /\.enex$/i;

/** What archive a file is by its name, or null. */
export function archiveKindOf(path: string): ArchiveKind | null {
  if (ZIP.test(path)) return 'zip';
  if (ENEX.test(path)) return 'enex';
  return null;
}

const ZIP_MEMBER = /^(.+?\.zip)\/./i;
const ENEX_MEMBER = /^(.+?\.enex)#./i;

/**
 * The archive a path is a member of, by its shape; null for any other path. A folder on disk
 * named like a zip (`old.zip/`) has paths of this shape too: a scan takes the paths it finds on
 * disk for files (see FolderSync.reconcile).
 */
export function archiveOfMember(at: string): string | null {
  const zip = ZIP_MEMBER.exec(at)?.[1];
  const enex = ENEX_MEMBER.exec(at)?.[1];
  if (zip && enex) return zip.length < enex.length ? zip : enex;
  return zip ?? enex ?? null;
}
