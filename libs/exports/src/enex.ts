import { createHash } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import { XMLValidator } from 'fast-xml-parser';
import { files } from './files.js';
import { elementText, xmlParser } from './xml.js';

/**
 * An Evernote export (`.enex`, File > Export Notebook): `<en-export>` holding `<note>`s, each with
 * its title, its content (ENML: XHTML in an `<en-note>`, attachments as `<en-media hash=…>`), its
 * dates, tags, source URL and attachments (`<resource>`, base64). A note becomes a web page of its
 * own (its attachments named where they were), dated when it was last edited and labelled with its
 * tags (`evernote:Recipes`); each attachment becomes an item of its own (a scanned receipt's PDF, a
 * photo), dated as its note. Notes are read one at a time, so a notebook of gigabytes of
 * attachments is never held whole. (`EVERNOTE_TYPE` is the type a folder's `.enex` files are listed as.)
 */
/** A note or an attachment of one, as an import sends it. */
export interface NotebookEntry {
  /** `<notebook key>#<note>`, `<notebook key>#<note>/<file name>` for an attachment. */
  key: string;
  type: string;
  bytes: Buffer;
  attributes: Record<string, unknown>;
  labels: string[];
}

/** Something of the notebook not sent, and why. */
export interface NotebookSkip {
  key: string;
  skipped: string;
}

type Node = Record<string, unknown>;

const parser = xmlParser(['tag', 'resource']);

const NOTE_START = '<note>';
const NOTE_END = '</note>';

/** Every note of a notebook and each of its attachments, in the file's order; what cannot be read is skipped with why. */
export async function* readEnex(notebook: string, key: string): AsyncGenerator<NotebookEntry | NotebookSkip> {
  const seen = new Map<string, number>();
  let index = 0;
  for await (const xml of noteElements(notebook)) {
    index++;
    const valid = XMLValidator.validate(xml);
    if (valid !== true) {
      yield {
        key: `${key}#${index}`,
        skipped: `an unreadable note (its XML is broken at line ${valid.err.line}: ${valid.err.msg})`,
      };
      continue;
    }
    const note = ((parser.parse(xml) as Node).note ?? {}) as Node;
    const created = enexDate(text(note.created));
    const updated = enexDate(text(note.updated));
    // Known by when it was made: the same note in a newer export, edited or not, is the same item.
    const base = created ?? `note-${index}`;
    const repeat = (seen.get(base) ?? 0) + 1;
    seen.set(base, repeat);
    const noteKey = `${key}#${repeat > 1 ? `${base}-${repeat}` : base}`;
    yield* noteEntries(note, noteKey, updated ?? created);
  }
}

/** A note's page and its attachments. */
function* noteEntries(note: Node, key: string, date: string | null): Generator<NotebookEntry | NotebookSkip> {
  const title = text(note.title).trim() || 'Untitled note';
  const labels = [...new Set(((note.tag as unknown[]) ?? []).map((tag) => text(tag).trim()).filter(Boolean))].map(
    (tag) => `evernote:${tag}`,
  );
  const resources = ((note.resource as Node[]) ?? []).map((resource, i) => attachment(resource, i));
  const byHash = new Map(resources.map((r) => [r.hash, r.name]));
  const sourceUrl = text((note['note-attributes'] as Node | undefined)?.['source-url']).trim();
  const body = enmlBody(text(note.content), byHash);
  const page =
    `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>` +
    `<body>${body}</body></html>`;
  yield {
    key,
    type: 'text/html',
    bytes: Buffer.from(page),
    attributes: { title, ...(date ? { modified: date } : {}), ...(isWebUrl(sourceUrl) ? { url: sourceUrl } : {}) },
    labels,
  };
  for (const resource of resources) {
    const at = `${key}/${resource.name}`;
    if (!resource.bytes) yield { key: at, skipped: 'an attachment of a note with no data in the export' };
    else
      yield {
        key: at,
        type: resource.type,
        bytes: resource.bytes,
        // A mail attached to a note (Evernote's mail-to-note) has its own date, and no folder.
        attributes: /^message\//.test(resource.type)
          ? {}
          : { filename: resource.name, ...(date ? { modified: date } : {}) },
        labels,
      };
  }
}

interface Attachment {
  name: string;
  type: string;
  bytes: Buffer | null;
  /** The MD5 of its bytes, hex: how the note's `<en-media>` names it. */
  hash: string;
}

function attachment(resource: Node, index: number): Attachment {
  const data = resource.data;
  const encoded = text(data);
  const bytes = encoded.trim() ? Buffer.from(encoded.replace(/\s+/g, ''), 'base64') : null;
  const type = text(resource.mime).trim().toLowerCase() || 'application/octet-stream';
  const named = text((resource['resource-attributes'] as Node | undefined)?.['file-name']).trim();
  // A name safe as the last part of a key: no slashes.
  const name = (named || `attachment-${index + 1}${extensionOf(type)}`).replace(/[/\\]/g, '_');
  return { name, type, bytes, hash: bytes ? createHash('md5').update(bytes).digest('hex') : '' };
}

const EXTENSIONS: Record<string, string> = {
  'image/jpeg': '.jpg',
  'image/png': '.png',
  'image/gif': '.gif',
  'application/pdf': '.pdf',
  'audio/mpeg': '.mp3',
  'audio/wav': '.wav',
};
const extensionOf = (type: string) => EXTENSIONS[type] ?? '';

/**
 * The ENML of a note as the inside of a page's body: its `<en-note>`'s content, an attachment
 * named where it was, a check box as ☐ or ☑, encrypted text said to be so.
 */
function enmlBody(enml: string, attachments: ReadonlyMap<string, string>): string {
  const inner =
    /<en-note[^>]*>([^]*)<\/en-note>/i.exec(enml)?.[1] ?? enml.replace(/<\?xml[^>]*\?>|<!DOCTYPE[^>]*>/gi, '');
  return inner
    .replace(/<en-media\b([^>]*?)\/?>(\s*<\/en-media>)?/gi, (_, attributes: string) => {
      const hash = /\bhash="([0-9a-f]+)"/i.exec(attributes)?.[1]?.toLowerCase() ?? '';
      const name = attachments.get(hash);
      return name ? `<p>[attachment: ${escapeHtml(name)}]</p>` : '';
    })
    .replace(/<en-todo\b([^>]*?)\/?>(\s*<\/en-todo>)?/gi, (_, attributes: string) =>
      /\bchecked="true"/i.test(attributes) ? '☑ ' : '☐ ',
    )
    .replace(/<en-crypt\b[^>]*>[^]*?<\/en-crypt>/gi, '<p>[encrypted text]</p>');
}

const text = elementText;

/** An ENEX time (`20130730T205204Z`, UTC) as ISO 8601, or null. */
function enexDate(value: string): string | null {
  const match = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/.exec(value.trim());
  if (!match) return null;
  const [, y, mo, d, h, mi, s] = match;
  const at = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}Z`);
  return Number.isNaN(at.getTime()) ? null : at.toISOString();
}

const isWebUrl = (value: string) => {
  try {
    return /^https?:$/.test(new URL(value).protocol);
  } catch {
    return false;
  }
};

const escapeHtml = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * The `<note>…</note>` elements of a notebook, one at a time. A note's content is ENML in a
 * CDATA section, where `</note>` cannot stand (ENML has no `note` element and escapes its text).
 * A note is kept in parts until its end comes, so one with a large attachment is searched once.
 */
async function* noteElements(notebook: string): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  /** The note being read, in parts; empty between notes. */
  let parts: string[] = [];
  /** The last characters read, which may hold the start of a `<note>` or `</note>` the next chunk ends. */
  let carry = '';
  const take = function* (text: string): Generator<string> {
    let rest = text;
    while (rest) {
      const seen = carry + rest;
      if (parts.length === 0) {
        const start = seen.indexOf(NOTE_START);
        if (start < 0) {
          carry = seen.slice(-(NOTE_START.length - 1));
          return;
        }
        parts = [NOTE_START];
        carry = '';
        rest = seen.slice(start + NOTE_START.length);
        continue;
      }
      const end = seen.indexOf(NOTE_END);
      if (end < 0) {
        parts.push(rest);
        carry = seen.slice(-(NOTE_END.length - 1));
        return;
      }
      // `seen` is the carry (already in `parts`) and the rest: the end is `end - carry.length` into the rest.
      const upTo = end + NOTE_END.length - carry.length;
      yield parts.join('') + rest.slice(0, upTo);
      parts = [];
      carry = '';
      rest = rest.slice(upTo);
    }
  };
  for await (const chunk of files.read(notebook)) yield* take(decoder.write(chunk));
  yield* take(decoder.end());
  // A note cut short (the file ends inside it): sent on to be found unreadable, not lost unseen.
  if (parts.length > 0) yield parts.join('');
}
