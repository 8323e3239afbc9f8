import { MEDIA_FILE_TYPES } from '@memex/contracts';
import { listFolder, MBOX_TYPE, type FolderFile, type SkippedFile } from './folder.js';
import { listPhotos, type PhotoFile } from './photos.js';

/** An mbox of a Takeout's Mail folder. */
export interface TakeoutMbox {
  key: string;
  file: string;
  size: number;
}

/** Everything in a Google Takeout folder: its mail, its photos and videos, its other files, and what is not read (with why). */
export interface TakeoutListing {
  mboxes: TakeoutMbox[];
  photos: PhotoFile[];
  /** Documents, calendars, contacts (Drive, Calendar, Contacts…), read as a folder import reads them. */
  documents: FolderFile[];
  skipped: SkippedFile[];
}

/** Takeout's own pages about the archive, not part of anyone's data. */
const TAKEOUT_INDEX = /(^|\/)archive_browser\.html$/;

/**
 * A Google Takeout folder (the `Takeout` folder of the unpacked archives, or one above it): the
 * mbox files of Mail, Google Photos with its sidecars and albums, and every other file a handler
 * of the memex takes; the rest is skipped with the reason, so the summary accounts for every file.
 */
export async function listTakeout(
  root: string,
  accepted: ReadonlySet<string>,
  warn: (message: string) => void,
): Promise<TakeoutListing> {
  const listed = await listFolder(root, new Set([...accepted, MBOX_TYPE]));
  const media = new Set<string>(Object.values(MEDIA_FILE_TYPES));
  const mboxes: TakeoutMbox[] = [];
  const skipped: SkippedFile[] = [...listed.skipped];
  const documents: FolderFile[] = [];
  const photoFiles: FolderFile[] = [];
  for (const file of listed.files) {
    if (file.type === MBOX_TYPE) mboxes.push({ key: file.key, file: file.file, size: file.size });
    else if (TAKEOUT_INDEX.test(file.key))
      skipped.push({ key: file.key, reason: "Takeout's index of the archive (not your data)" });
    else if (media.has(file.type)) photoFiles.push(file);
    else documents.push(file);
  }
  const photos = await listPhotos(photoFiles, skipped, root, warn);
  return { mboxes, photos: photos.files, documents, skipped: photos.skipped };
}
