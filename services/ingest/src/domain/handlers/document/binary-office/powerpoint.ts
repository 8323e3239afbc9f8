import { RejectedItem } from '../../handler.js';
import type { CompoundFile } from './compound.js';

/**
 * The slides of a PowerPoint 97–2003 presentation ([MS-PPT]), in order, each with its notes. The
 * `Current User` stream points at the last edit; edits chain back, each with a persist directory
 * (object id → offset in `PowerPoint Document`), newer entries winning, so a file saved
 * incrementally gives each slide's latest text once. The document's slide list holds each slide's
 * placeholder text (titles, bullets); a slide's own drawing holds its other text boxes.
 */
export function readSlides(file: CompoundFile): { title: string; paragraphs: string[] }[] {
  const stream = file.stream('PowerPoint Document');
  if (!stream) throw new RejectedItem('not a readable PowerPoint presentation: it has no PowerPoint Document stream');
  if (file.has('EncryptedSummary'))
    throw new RejectedItem('a password-protected PowerPoint presentation: its slides are encrypted');
  const current = file.stream('Current User');
  const objects = current && current.length >= 20 ? persistDirectory(stream, current.readUInt32LE(16)) : null;
  const document = objects?.document !== undefined ? recordAt(stream, objects.document) : null;
  if (!objects || document?.type !== DOCUMENT) {
    // No readable edit chain (a damaged or unusual writer): every text atom outside the masters, in file order.
    return [
      {
        title: '',
        paragraphs: textsIn(stream, { type: 0, instance: 0, start: 0, end: stream.length, container: true }),
      },
    ];
  }
  const lists = childrenOf(stream, document).filter((child) => child.type === SLIDE_LIST);
  const listed = (instance: number) => {
    const list = lists.find((child) => child.instance === instance);
    return list ? childrenOf(stream, list) : [];
  };
  // A slide names its notes by their slide id; the notes list maps that id to the notes' object.
  const notes = new Map(
    listed(NOTES_LIST)
      .filter((child) => child.type === SLIDE_PERSIST)
      .map((child) => [stream.readUInt32LE(child.start + 12), stream.readUInt32LE(child.start)]),
  );
  const slides: { placeholders: string[]; own: string[] }[] = [];
  for (const child of listed(SLIDES_LIST)) {
    if (child.type === SLIDE_PERSIST) {
      const container = recordAt(stream, objects.offsets.get(stream.readUInt32LE(child.start)));
      const own =
        container?.type === SLIDE
          ? slideTexts(stream, container, (id) => objects.offsets.get(notes.get(id) ?? -1))
          : [];
      slides.push({ placeholders: [], own });
    } else if (slides.length > 0 && isText(child.type))
      slides[slides.length - 1]!.placeholders.push(...textOf(stream, child));
  }
  // Later writers keep a placeholder's text in the slide's drawing too, some only there: each paragraph once.
  return slides.map(({ placeholders, own }) => {
    const paragraphs = [...placeholders, ...own.filter((text) => !placeholders.includes(text))];
    // The first text on a slide is its title placeholder's.
    return { title: paragraphs[0] ?? '', paragraphs };
  });
}

const DOCUMENT = 0x03e8;
const SLIDE = 0x03ee;
const SLIDE_ATOM = 0x03ef;
const NOTES = 0x03f0;
const MAIN_MASTER = 0x03f8;
const SLIDE_PERSIST = 0x03f3;
const SLIDE_LIST = 0x0ff0;
/** The slide lists' instances: the slides', and their notes'. */
const SLIDES_LIST = 0;
const NOTES_LIST = 2;
const HANDOUT = 0x0fc9;
const TEXT_CHARS = 0x0fa0;
const TEXT_BYTES = 0x0fa8;
const USER_EDIT = 0x0ff5;
const PERSIST_DIRECTORY = 0x1772;

const isText = (type: number) => type === TEXT_CHARS || type === TEXT_BYTES;

interface PptRecord {
  type: number;
  instance: number;
  /** The record's body: [start, end) in the stream. */
  start: number;
  end: number;
  container: boolean;
}

function recordAt(stream: Buffer, offset: number | undefined): PptRecord | null {
  if (offset === undefined || offset + 8 > stream.length) return null;
  const head = stream.readUInt16LE(offset);
  const start = offset + 8;
  return {
    type: stream.readUInt16LE(offset + 2),
    instance: head >> 4,
    start,
    end: Math.min(stream.length, start + stream.readUInt32LE(offset + 4)),
    container: (head & 0x0f) === 0x0f,
  };
}

function childrenOf(stream: Buffer, parent: PptRecord): PptRecord[] {
  const children: PptRecord[] = [];
  for (let at = parent.start; at + 8 <= parent.end;) {
    const child = recordAt(stream, at)!;
    children.push(child);
    at = child.end;
  }
  return children;
}

/** The objects of the last edit: newest entries first, each edit's directory filling in what newer ones lack. */
function persistDirectory(
  stream: Buffer,
  lastEdit: number,
): { offsets: Map<number, number>; document?: number } | null {
  const offsets = new Map<number, number>();
  let documentId: number | undefined;
  const seen = new Set<number>();
  for (let edit = lastEdit; edit > 0; edit = stream.readUInt32LE(recordAt(stream, edit)!.start + 8)) {
    const atom = recordAt(stream, edit);
    if (atom?.type !== USER_EDIT || seen.has(edit) || atom.end - atom.start < 20)
      return offsets.size ? { offsets } : null;
    seen.add(edit);
    documentId ??= stream.readUInt32LE(atom.start + 16);
    const directory = recordAt(stream, stream.readUInt32LE(atom.start + 12));
    if (directory?.type !== PERSIST_DIRECTORY) return null;
    for (let at = directory.start; at + 4 <= directory.end;) {
      const entry = stream.readUInt32LE(at);
      const first = entry & 0xfffff;
      const count = entry >>> 20;
      for (let i = 0; i < count && at + 8 + i * 4 <= directory.end; i++)
        if (!offsets.has(first + i)) offsets.set(first + i, stream.readUInt32LE(at + 4 + i * 4));
      at += 4 + count * 4;
    }
  }
  return { offsets, document: documentId === undefined ? undefined : offsets.get(documentId) };
}

/** A slide's own text boxes, then its notes (a bare slide number left out). */
function slideTexts(stream: Buffer, slide: PptRecord, notesAt: (notesId: number) => number | undefined): string[] {
  const texts = textsIn(stream, slide);
  const atom = childrenOf(stream, slide).find((child) => child.type === SLIDE_ATOM);
  const notesId = atom && atom.end - atom.start >= 20 ? stream.readUInt32LE(atom.start + 16) : 0;
  const notes = notesId ? recordAt(stream, notesAt(notesId)) : null;
  if (notes?.type === NOTES) texts.push(...textsIn(stream, notes).filter((text) => !/^\d+$/.test(text)));
  return texts;
}

/** Every text atom under a record, in order, the masters' and handouts' (placeholder prompts) left out. */
function textsIn(stream: Buffer, parent: PptRecord): string[] {
  const texts: string[] = [];
  for (const child of childrenOf(stream, parent)) {
    if (child.container && child.type !== MAIN_MASTER && child.type !== HANDOUT) texts.push(...textsIn(stream, child));
    else if (isText(child.type)) texts.push(...textOf(stream, child));
  }
  return texts;
}

/** A text atom's paragraphs: UTF-16, or one byte per character; \r ends a paragraph, \v a line. */
function textOf(stream: Buffer, atom: PptRecord): string[] {
  const bytes = stream.subarray(atom.start, atom.end);
  const text = atom.type === TEXT_CHARS ? bytes.toString('utf16le') : bytes.toString('latin1');
  return text
    .split(/[\r\v]/)
    .map((line) => line.replace(/[\u0000-\u0008\u000e-\u001f]/g, '').trim())
    .filter(Boolean);
}
