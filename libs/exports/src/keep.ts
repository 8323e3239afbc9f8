import { files } from './files.js';
import type { FolderFile, SkippedFile } from './folder.js';
import { labelOf } from './photos.js';

/** A document of a Takeout, with the scope labels what Google kept about it gives (a Keep note's labels). */
export interface TakeoutDocument extends FolderFile {
  labels: string[];
}

/** A note of Google Keep in a Takeout: `Keep/<title>.html`, its details in the `.json` beside it. */
const KEEP_NOTE = /(^|\/)Keep\/[^/]+\.html$/;
/** Keep's list of every label, which the notes' own details repeat. */
const KEEP_LABELS = /(^|\/)Keep\/Labels\.txt$/;

/** What Takeout writes about a Keep note (its `.json`). */
interface KeepDetails {
  isTrashed?: boolean;
  userEditedTimestampUsec?: number | string;
  createdTimestampUsec?: number | string;
  labels?: Array<{ name?: unknown }>;
}

const KEEP_DETAILS_READ = "a Google Keep note's details (time, labels), read with its note";

/** A Keep timestamp (microseconds since 1970) as ISO, or undefined when there is none. */
function keepTime(microseconds: number | string | undefined): string | undefined {
  const ms = Number(microseconds) / 1000;
  return Number.isFinite(ms) && ms > 0 ? new Date(ms).toISOString() : undefined;
}

/**
 * A Takeout's documents, its Google Keep notes with what their details say: when the note was
 * last edited (the file's own time is the export's) and its labels (`keep:Groceries`); a note in
 * Keep's trash is skipped, as are the details and Keep's list of labels, each with why. A note
 * whose details cannot be read comes as its page alone, with a warning.
 */
export async function withKeepNotes(
  documents: FolderFile[],
  skipped: SkippedFile[],
  warn: (message: string) => void,
): Promise<{ documents: TakeoutDocument[]; skipped: SkippedFile[] }> {
  const reasons = new Map<string, string>();
  const kept: TakeoutDocument[] = [];
  for (const document of documents) {
    if (KEEP_LABELS.test(document.key)) {
      reasons.set(document.key, "Google Keep's list of labels (each note carries its own)");
      continue;
    }
    if (!KEEP_NOTE.test(document.key)) {
      kept.push({ ...document, labels: [] });
      continue;
    }
    const detailsFile = document.file.replace(/\.html$/, '.json');
    const detailsKey = document.key.replace(/\.html$/, '.json');
    let details: KeepDetails;
    try {
      details = JSON.parse((await files.readFile(detailsFile)).toString('utf8')) as KeepDetails;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
        warn(`${detailsFile}: not a Google Keep note's details (${(error as Error).message})`);
      kept.push({ ...document, labels: [] });
      continue;
    }
    reasons.set(detailsKey, KEEP_DETAILS_READ);
    if (details.isTrashed === true) {
      reasons.set(document.key, "a note in Google Keep's trash");
      continue;
    }
    const names = (details.labels ?? []).flatMap(({ name }) => (typeof name === 'string' && name.trim() ? [name] : []));
    kept.push({
      ...document,
      modified:
        keepTime(details.userEditedTimestampUsec) ?? keepTime(details.createdTimestampUsec) ?? document.modified,
      labels: names.map((name) => labelOf('keep', name)),
    });
  }
  const keys = new Set(skipped.map((skip) => skip.key));
  return {
    documents: kept,
    skipped: [
      ...skipped.map(({ key, reason }) => ({ key, reason: reasons.get(key) ?? reason })),
      // Notes in the trash and the labels list, which the listing had as documents.
      ...[...reasons].filter(([key]) => !keys.has(key)).map(([key, reason]) => ({ key, reason })),
    ],
  };
}
