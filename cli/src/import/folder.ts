import fs from 'node:fs/promises';
import path from 'node:path';
import { PHOTO_FILE_TYPES } from '@memex/contracts';

/** File extensions and the MIME types the document handler reads them as. */
export const DOCUMENT_TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  md: 'text/markdown',
  markdown: 'text/markdown',
  txt: 'text/plain',
  text: 'text/plain',
  html: 'text/html',
  htm: 'text/html',
  xhtml: 'application/xhtml+xml',
  rst: 'text/x-rst',
  eml: 'message/rfc822',
  ics: 'text/calendar',
  vcf: 'text/vcard',
  vcard: 'text/vcard',
};

export interface FolderFile {
  /** Path relative to the folder, with `/`: the item's external_id. */
  key: string;
  file: string;
  /** null when no handler the server lists takes the extension. */
  type: string | null;
  size: number;
  modified: string;
  /** Changes when the file does: a changed file is sent again (and comes back `updated`). */
  version: string;
}

/** Every file under a folder (hidden files and folders left out), in a stable order. */
export async function listFolder(root: string, accepted: ReadonlySet<string>): Promise<FolderFile[]> {
  const files: FolderFile[] = [];
  const visit = async (dir: string) => {
    const entries = (await fs.readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        await visit(full);
        continue;
      }
      if (!entry.isFile()) continue;
      const stat = await fs.stat(full);
      const extension = path.extname(entry.name).slice(1).toLowerCase();
      const type = DOCUMENT_TYPES[extension] ?? PHOTO_FILE_TYPES[extension] ?? null;
      const key = path.relative(root, full).split(path.sep).join('/');
      files.push({
        key,
        file: full,
        type: type && accepted.has(type) ? type : null,
        size: stat.size,
        modified: stat.mtime.toISOString(),
        version: `${key}\t${stat.size}\t${stat.mtimeMs}`,
      });
    }
  };
  await visit(root);
  return files;
}
