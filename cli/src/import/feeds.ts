import path from 'node:path';
import { INGEST_REQUEST_LIMIT_BYTES, MEDIA_FILE_TYPES, Types } from '@memex/contracts';
import {
  completePartialEmlx,
  EVERNOTE_TYPE,
  fileAttributes,
  files as exportFiles,
  FolderArchives,
  inArchive,
  isPartialEmlx,
  listFolder,
  listMaildir,
  listMboxTree,
  listPhotos,
  listTakeout,
  MBOX_TYPE,
  mboxOfTree,
  mboxSize,
  olmFileCount,
  OUTLOOK_DATA_TYPE,
  photoMetadata,
  pstItemCount,
  pstOpenProblem,
  readMbox,
  readEnex,
  readOlm,
  readPst,
  takeoutMessage,
  withAppleMailParts,
  type FolderFile,
  type MboxFile,
  type MboxMessage,
  type PhotoFile,
  type PstMessage,
  type PstSkipped,
  type SkippedFile,
  type TakeoutListing,
} from '@memex/exports';
import type { ImportReport } from './report.js';
import { StateFile, type ImportState } from './state.js';
import { Uploader, type Answered, type Item, type Result } from './uploader.js';
import type { ImportOptions } from './run.js';

/**
 * The feeds of `memex import`: where each kind of source reads its items from (an mbox, a folder
 * tree, a Takeout, an Outlook file), and how each records what is done so a run resumes.
 */

/** Where each kind of source reads from, and how its progress is recorded. */
export interface Feed {
  total: { value: number; unit: 'bytes' | 'files' | 'items' };
  /** Files done by earlier runs, not sent again (known once `send` is done). */
  readonly earlier: number;
  send(uploader: Uploader, report: ImportReport): Promise<void>;
  /** Records an answered batch in the state: the mbox offset reached, or the files done. */
  commit(batch: Answered[], results: Result[]): void;
  /** Lets go of what the files were read from (a folder's zip archives). */
  close?(): void;
}

const tooLarge = (bytes: number) =>
  `it is ${(bytes / 1024 / 1024).toFixed(1)} MB; one memex.ingest request carries at most ${INGEST_REQUEST_LIMIT_BYTES / 1024 / 1024} MB`;

function mailAttributes(
  options: ImportOptions,
  message: MboxMessage,
  folder = options.folder,
): Record<string, unknown> {
  return {
    ...(folder ? { folder } : {}),
    ...(message.received ? { received: message.received } : {}),
  };
}

/**
 * A message's external id: its place in the file, except in a Google Takeout mbox, where the
 * Gmail id names it across exports (a newer export puts messages at other places).
 */
function mailExternalId(message: MboxMessage, position: string): string {
  const takeout = takeoutMessage(message.bytes, message.sender);
  return takeout.labels !== null && takeout.externalId ? takeout.externalId : position;
}

/**
 * An mbox, or the mboxes of a folder tree one after the other: progress is the bytes read through
 * them all (`state.offset`), so an interrupted run resumes inside the file it stopped in. A
 * message in a tree is labelled with the folder its file stands for, unless `--folder` says one.
 */
function mboxFeed(options: ImportOptions, state: ImportState, listing: MboxListing): Feed {
  return {
    total: { value: listing.mboxes.reduce((n, m) => n + m.size, 0), unit: 'bytes' },
    earlier: 0,
    async send(uploader, report) {
      for (const { key, reason } of listing.skipped) report.skip(key, reason);
      let start = 0;
      for (const mbox of listing.mboxes) {
        const base = start;
        start += mbox.size;
        if (start <= state.offset) continue; // read through by an earlier run
        const reading = untilDamaged(readMbox(mbox.file, Math.max(0, state.offset - base)));
        for await (const message of reading) {
          const key = `${mbox.key}#${message.offset}`;
          const position = base + message.end;
          if (message.bytes.length > INGEST_REQUEST_LIMIT_BYTES) {
            await uploader.reject({ key, position }, tooLarge(message.bytes.length));
            continue;
          }
          await uploader.add({
            key,
            position,
            bytes: message.bytes.length,
            item: item(
              options,
              'message/rfc822',
              message.bytes,
              mailExternalId(message, key),
              mailAttributes(options, message, options.folder ?? mbox.folder),
            ),
          });
        }
        // A damaged member of a zip: the messages before it are in; it is rejected, the next mbox read.
        if (reading.damage)
          await uploader.reject(
            { key: mbox.key, position: start },
            `${reading.damage.message}: what follows was not read`,
          );
      }
    },
    commit(batch) {
      state.offset = batch[batch.length - 1]!.position!;
    },
  };
}

type MboxListing = Awaited<ReturnType<typeof listMboxTree>>;

/** The mboxes to read: the file, or those of the folder tree (its other files skipped, with why). */
async function mboxListing(options: ImportOptions, state: ImportState): Promise<MboxListing> {
  const target = options.target;
  const stat = await exportFiles.stat(target);
  const listing = stat.isDirectory()
    ? await listMboxTree(target)
    : {
        mboxes: [{ key: path.basename(target), file: target, size: await mboxSize(target), folder: undefined }],
        skipped: [],
      };
  assertResumable(target, listing, state);
  state.mboxes = listing.mboxes.map((m) => [m.key, m.size]);
  return listing;
}

/**
 * A run resumes at `state.offset` only over the files the runs before read, as they were: the
 * file it stopped in may have grown (mail appended), those before it not, else the offset would
 * land elsewhere and messages be passed over unseen.
 */
function assertResumable(target: string, listing: MboxListing, state: ImportState): void {
  // A state from before `mboxes` was kept is of one file: compared with itself, only its length counts.
  const before = state.mboxes ?? listing.mboxes.map((m): [string, number] => [m.key, m.size]);
  const refuse = (why: string) => {
    throw new Error(`${target} ${why} (${state.offset} bytes done): use --restart`);
  };
  let start = 0;
  for (const [i, mbox] of listing.mboxes.entries()) {
    if (start >= state.offset) return;
    const [key, size] = before[i] ?? [undefined, 0];
    const stoppedInside = state.offset <= start + size;
    if (key !== mbox.key) refuse(`changed since it was imported (${mbox.key} is not where ${key ?? 'nothing'} was)`);
    if (mbox.size < Math.min(size, state.offset - start)) refuse('is shorter than when it was imported');
    if (!stoppedInside && mbox.size !== size) refuse(`changed since it was imported (${mbox.key})`);
    start += size;
  }
  if (start < state.offset) refuse('is shorter than when it was imported');
}

/**
 * A file's bytes, or why they cannot be read: a member of a damaged zip, a file gone or unreadable
 * since it was listed. That file is rejected with the reason; the rest of the run goes on.
 */
const readOrWhy = (file: string): Promise<Buffer | Error> =>
  exportFiles.readFile(file).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));

/**
 * Maildir and folder imports: a list of files, each done once (recorded in the state's `.done`
 * file), and the files skipped with their reasons (counted every run: they were not sent). A
 * rejected file is not done: the next run sends it again (fixed, or a newer memex may read it).
 */
function filesFeed<F extends { key: string; file: string; size?: number }>(
  stateFile: StateFile,
  listed: { files: F[]; skipped: SkippedFile[] },
  doneKey: (file: F) => string,
  toItem: (file: F, bytes: Buffer) => Item | Promise<Item>,
): Feed {
  const { files, skipped } = listed;
  const done = stateFile.doneKeys();
  const byKey = new Map(files.map((f) => [f.key, f]));
  const earlier = files.filter((f) => done.has(doneKey(f))).length;
  let position = earlier;
  return {
    total: { value: files.length, unit: 'files' },
    earlier,
    async send(uploader, report) {
      for (const { key, reason } of skipped) report.skip(key, reason);
      for (const file of files) {
        if (done.has(doneKey(file))) continue;
        const size = file.size ?? (await exportFiles.stat(file.file)).size;
        if (size > INGEST_REQUEST_LIMIT_BYTES) {
          await uploader.reject({ key: file.key }, tooLarge(size));
          continue;
        }
        const bytes = await readOrWhy(file.file);
        if (bytes instanceof Error) {
          await uploader.reject({ key: file.key }, bytes.message);
          continue;
        }
        await uploader.add({ key: file.key, bytes: bytes.length, item: await toItem(file, bytes) });
      }
    },
    commit(batch, results) {
      position += batch.length;
      const answered = batch.filter((_, i) => results[i]!.status !== 'rejected');
      stateFile.appendDone(answered.map((a) => doneKey(byKey.get(a.key)!)));
      batch.forEach((a) => (a.position = position));
    },
  };
}

/**
 * The keys of what earlier runs sent (the state's `.done` file), and of what is in flight: an
 * item is done once its batch is answered, unless it was rejected (the next run sends it again).
 */
class DoneKeys {
  private readonly done: Set<string>;
  /** Report key → done key, for what is in flight. */
  private readonly inFlight = new Map<string, string>();

  constructor(private readonly stateFile: StateFile) {
    this.done = stateFile.doneKeys();
  }

  /** False when an earlier run sent it (it is not sent again); else it is on its way. */
  sending(key: string, doneKey: string): boolean {
    if (this.done.has(doneKey)) return false;
    this.inFlight.set(key, doneKey);
    return true;
  }

  commit(batch: Answered[], results: Result[]): void {
    const answered = batch.filter((_, i) => results[i]!.status !== 'rejected');
    this.stateFile.appendDone(answered.map((a) => this.inFlight.get(a.key)!));
    for (const a of batch) this.inFlight.delete(a.key);
  }
}

/**
 * Sends the items of an Outlook data file or archive (.pst, .ost, .olm), each done on its own under
 * `doneKey` (a run after an interrupted one sends only what that did not), each other item skipped
 * with why; `keyOf` names an item by its place in the file. Returns how many earlier runs sent.
 */
async function sendOutlookItems(
  options: ImportOptions,
  entries: AsyncIterable<PstMessage | PstSkipped>,
  keys: { keyOf: (key: string) => string; doneKey: (key: string) => string },
  done: DoneKeys,
  send: { uploader: Uploader; report: ImportReport; position: () => number },
): Promise<number> {
  let earlier = 0;
  for await (const entry of entries) {
    const key = keys.keyOf(entry.key);
    const position = send.position();
    if ('skipped' in entry) {
      send.report.skip(key, entry.skipped);
      continue;
    }
    if (!done.sending(key, keys.doneKey(entry.key))) {
      earlier++;
      continue;
    }
    if (entry.bytes.length > INGEST_REQUEST_LIMIT_BYTES) {
      await send.uploader.reject({ key, position }, tooLarge(entry.bytes.length));
      continue;
    }
    const folder = options.folder ?? entry.folder;
    // A calendar entry or a contact carries its own dates and names; a message its folder and read mark.
    const attributes =
      entry.type === 'message/rfc822'
        ? { ...(folder ? { folder } : {}), read: entry.read, ...(entry.received ? { received: entry.received } : {}) }
        : {};
    const sent = item(options, entry.type, entry.bytes, key, attributes);
    await send.uploader.add({ key, position, bytes: entry.bytes.length, item: sent });
  }
  return earlier;
}

/**
 * An Outlook data file (.pst, .ost) or Outlook for Mac archive (.olm, mounted), item by item (see
 * `sendOutlookItems`).
 */
async function outlookFeed(options: ImportOptions, stateFile: StateFile, kind: 'pst' | 'olm'): Promise<Feed> {
  const done = new DoneKeys(stateFile);
  let earlier = 0;
  const total = kind === 'pst' ? pstItemCount(options.target) : await olmFileCount(options.target);
  return {
    total: { value: total, unit: 'items' },
    get earlier() {
      return earlier;
    },
    async send(uploader, report) {
      let position = 0;
      const keys = { keyOf: (key: string) => key, doneKey: (key: string) => `${kind}\t${key}` };
      const entries = kind === 'pst' ? readPst(options.target) : readOlm(options.target);
      earlier = await sendOutlookItems(options, entries, keys, done, { uploader, report, position: () => ++position });
    },
    commit(batch, results) {
      done.commit(batch, results);
    },
  };
}

/** A file a feed sends as one item, under the key that says it is done. */
interface FeedFile {
  file: FolderFile;
  done: string;
  /** Its item; `skip` accounts for what the file names that the item comes without. */
  toItem(bytes: Buffer, skip: (key: string, reason: string) => void): Promise<Item> | Item;
}

/** A message of an mbox as `mailAndFilesFeed` sends it: its external id, and the key that says it is done. */
type MailKeys = (message: MboxMessage, key: string, mbox: MboxFile) => { externalId: string; done: string };

/**
 * The mboxes and files of a Google Takeout or of a folder in one run. Each message and file is
 * done under its own key, so a run after an interrupted one sends only what that did not, and a
 * re-run on a newer Takeout export only what is new or changed (the keys stay the same unless what
 * a message or photo says changed: a message's Gmail labels; a photo's size, sidecar and albums):
 * new messages and photos are created, changed labels update their message, and nothing is stored
 * twice. Progress is in bytes.
 */
function mailAndFilesFeed(
  options: ImportOptions,
  stateFile: StateFile,
  listing: {
    mboxes: MboxFile[];
    psts?: FolderFile[];
    notebooks?: { files: FolderFile[]; accepted: ReadonlySet<string> };
    files: FeedFile[];
    skipped: SkippedFile[];
  },
  mailKeys: MailKeys,
): Feed {
  const done = new DoneKeys(stateFile);
  const { mboxes, psts = [], notebooks = { files: [], accepted: new Set() }, files, skipped } = listing;
  const mailBytes = [...mboxes, ...psts, ...notebooks.files].reduce((n, m) => n + m.size, 0);
  let earlier = 0;
  return {
    total: { value: mailBytes + files.reduce((n, f) => n + f.file.size, 0), unit: 'bytes' },
    get earlier() {
      return earlier;
    },
    async send(uploader, report) {
      for (const { key, reason } of skipped) report.skip(key, reason);
      let base = 0;
      for (const mbox of mboxes) {
        const reading = untilDamaged(readMbox(mbox.file));
        for await (const message of reading) {
          const key = `${mbox.key}#${message.offset}`;
          const { externalId, done: doneKey } = mailKeys(message, key, mbox);
          if (!done.sending(key, doneKey)) {
            earlier++;
            continue;
          }
          const position = base + message.end;
          if (message.bytes.length > INGEST_REQUEST_LIMIT_BYTES) {
            await uploader.reject({ key, position }, tooLarge(message.bytes.length));
            continue;
          }
          const attributes = mailAttributes(options, message, mbox.folder ?? options.folder);
          const mail = item(options, 'message/rfc822', message.bytes, externalId, attributes);
          await uploader.add({ key, position, bytes: message.bytes.length, item: mail });
        }
        base += mbox.size;
        if (reading.damage)
          await uploader.reject(
            { key: mbox.key, position: base },
            `${reading.damage.message}: what follows was not read`,
          );
      }
      // An Outlook data file's items, each done by its place in the file as it was (a changed file is read again).
      for (const pst of psts) {
        base += pst.size;
        const keys = {
          keyOf: (key: string) => `${pst.key}#${key}`,
          doneKey: (key: string) => `pst\t${pst.version}\t${key}`,
        };
        const send = { uploader, report, position: () => base };
        earlier += await sendOutlookItems(options, readPst(pst.file), keys, done, send);
      }
      // An Evernote export's notes and their attachments, each done by its place in the notebook as
      // it was (a newer export is read again: an edited note comes back updated, the rest duplicates).
      for (const notebook of notebooks.files) {
        base += notebook.size;
        const reading = untilDamaged(readEnex(notebook.file, notebook.key));
        for await (const entry of reading) {
          const position = base;
          if ('skipped' in entry) report.skip(entry.key, entry.skipped);
          else if (!done.sending(entry.key, `enex\t${notebook.version}\t${entry.key}`)) earlier++;
          else if (!notebooks.accepted.has(entry.type))
            report.skip(entry.key, `an attachment of a note, of a type no handler takes (${entry.type})`);
          else if (entry.bytes.length > INGEST_REQUEST_LIMIT_BYTES)
            await uploader.reject({ key: entry.key, position }, tooLarge(entry.bytes.length));
          else {
            const sent = item(options, entry.type, entry.bytes, entry.key, entry.attributes, entry.labels);
            await uploader.add({ key: entry.key, position, bytes: entry.bytes.length, item: sent });
          }
        }
        if (reading.damage)
          await uploader.reject(
            { key: notebook.key, position: base },
            `${reading.damage.message}: what follows was not read`,
          );
      }
      for (const { file, done: doneKey, toItem } of files) {
        base += file.size;
        if (!done.sending(file.key, doneKey)) {
          earlier++;
          continue;
        }
        if (file.size > INGEST_REQUEST_LIMIT_BYTES) {
          await uploader.reject({ key: file.key, position: base }, tooLarge(file.size));
          continue;
        }
        const bytes = await readOrWhy(file.file);
        if (bytes instanceof Error) {
          await uploader.reject({ key: file.key, position: base }, bytes.message);
          continue;
        }
        const skip = (key: string, reason: string) => report.skip(key, reason);
        await uploader.add({ key: file.key, position: base, bytes: bytes.length, item: await toItem(bytes, skip) });
      }
    },
    commit(batch, results) {
      done.commit(batch, results);
    },
  };
}

/**
 * Messages of an mbox until its bytes cannot be read (a damaged member of a zip part), which ends
 * the iteration and is kept in `damage`: the messages before it are sent, the rest of the run goes on.
 */
function untilDamaged<T>(messages: AsyncIterable<T>): AsyncIterable<T> & { damage?: Error } {
  const reading: AsyncIterable<T> & { damage?: Error } = {
    async *[Symbol.asyncIterator]() {
      const iterator = messages[Symbol.asyncIterator]();
      try {
        for (;;) {
          let next: IteratorResult<T>;
          try {
            next = await iterator.next();
          } catch (error) {
            reading.damage = error instanceof Error ? error : new Error(String(error));
            return;
          }
          if (next.done) return;
          yield next.value;
        }
      } finally {
        // Left early (the memex went away): the file is let go.
        if (!reading.damage) await iterator.return?.();
      }
    },
  };
  return reading;
}

/** A Google Takeout's mail (each message known by its Gmail id and labels), photos and other files. */
function takeoutFeed(options: ImportOptions, stateFile: StateFile, listing: TakeoutListing): Feed {
  const files: FeedFile[] = [
    ...listing.photos.map((photo) => ({
      file: photo as FolderFile,
      done: `file\t${photo.key}\t${photo.size}\t${JSON.stringify([photo.attributes, photo.labels])}`,
      toItem: (bytes: Buffer) => photoItem(options, photo, bytes, photo.key),
    })),
    ...listing.documents.map((document) => ({
      file: document,
      // A Keep note's labels count, as a photo's albums do: relabelled in a newer export, it is sent
      // again, and ingest updates its item with the new labels.
      done: `file\t${document.key}\t${document.size}${document.labels.length > 0 ? `\t${JSON.stringify(document.labels)}` : ''}`,
      toItem: (bytes: Buffer) => fileItem(options, document, bytes, document.labels),
    })),
  ];
  const mboxes = listing.mboxes.map((mbox) => ({ ...mbox, folder: undefined }));
  return mailAndFilesFeed(options, stateFile, { mboxes, files, skipped: listing.skipped }, (message, key) => {
    const takeout = takeoutMessage(message.bytes, message.sender);
    const externalId = takeout.externalId ?? key;
    return { externalId, done: `mail\t${externalId}\t${takeout.labels ?? ''}` };
  });
}

/**
 * A folder's documents, photos, calendars and contacts, each a file, and its mboxes (an exported
 * `.mbox`, a Thunderbird profile's `Inbox`), message by message, labelled with the folder each
 * mbox stands for.
 */
async function folderFeed(options: ImportOptions, stateFile: StateFile): Promise<Feed> {
  const archives = new FolderArchives();
  const handled = await acceptedTypes(options);
  const accepted = new Set([...handled, MBOX_TYPE, OUTLOOK_DATA_TYPE, EVERNOTE_TYPE]);
  // Apple Mail's attachments kept apart from their messages go inside them.
  const listed = withAppleMailParts(await listFolder(options.target, accepted, archives));
  const mboxes: MboxFile[] = [];
  const psts: FolderFile[] = [];
  const notebooks: FolderFile[] = [];
  const versions = new Map<string, string>();
  const files: FeedFile[] = [];
  const skipped = [...listed.skipped];
  for (const file of listed.files) {
    if (file.type === OUTLOOK_DATA_TYPE) {
      // pst-extractor reads a file on disk, and one it cannot open at all says so here.
      const unreadable = inArchive(file.file)
        ? 'an Outlook data file inside a zip: unpack it to read it'
        : pstOpenProblem(file.file);
      if (unreadable) skipped.push({ key: file.key, reason: unreadable });
      else psts.push(file);
      continue;
    }
    if (file.type === EVERNOTE_TYPE) {
      notebooks.push(file);
      continue;
    }
    if (file.type !== MBOX_TYPE) {
      // A part Mail never downloaded is not in the message: the summary says which.
      const whole = async (bytes: Buffer, skip: (key: string, reason: string) => void) => {
        if (!isPartialEmlx(file.key)) return bytes;
        const complete = await completePartialEmlx(bytes, file.file);
        for (const part of complete.missing)
          skip(
            `${file.key}#part ${part}`,
            'a part of an Apple Mail message that Mail never downloaded: sent without it',
          );
        return complete.bytes;
      };
      files.push({
        file,
        done: file.version,
        toItem: async (bytes, skip) => fileItem(options, file, await whole(bytes, skip)),
      });
      continue;
    }
    const mbox = await mboxOfTree(file.file, file.key, file.size);
    if ('skipped' in mbox) skipped.push({ key: file.key, reason: mbox.skipped });
    else mboxes.push(mbox);
    versions.set(file.key, file.version);
  }
  // A message is done by its place in its mbox as it was (a changed mbox is read again).
  const listing = { mboxes, psts, notebooks: { files: notebooks, accepted: handled }, files, skipped };
  const feed = mailAndFilesFeed(options, stateFile, listing, (message, key, mbox) => ({
    externalId: mailExternalId(message, key),
    done: `mail\t${versions.get(mbox.key)}\t${message.offset}`,
  }));
  feed.close = () => archives.close();
  return feed;
}

function item(
  options: ImportOptions,
  type: string,
  bytes: Buffer,
  externalId: string,
  attributes: Record<string, unknown>,
  labels: string[] = [],
): Item {
  const all = [...new Set([...options.labels, ...labels])];
  return {
    type,
    data: bytes.toString('base64'),
    source: { kind: options.kind, id: options.source },
    external_id: externalId,
    attributes,
    ...(all.length > 0 ? { labels: all } : {}),
  };
}

/** A document, calendar or contacts file, or a single saved message, with what its place says. */
function fileItem(options: ImportOptions, file: FolderFile, bytes: Buffer, labels: string[] = []): Item {
  return item(options, file.type, bytes, file.key, fileAttributes(file.type, file.key, file.modified), labels);
}

/**
 * A photo with its sidecars' attributes and labels; the XMP and IPTC inside its bytes (Apple
 * Photos writes title, caption and keywords there) are read by the photo handler.
 */
function photoItem(options: ImportOptions, photo: PhotoFile, bytes: Buffer, externalId: string): Item {
  const { attributes, labels } = photoMetadata(photo);
  return item(options, photo.type, bytes, externalId, attributes, labels);
}

export async function feedFor(options: ImportOptions, state: ImportState, stateFile: StateFile): Promise<Feed> {
  switch (options.kind) {
    case 'mbox':
      return mboxFeed(options, state, await mboxListing(options, state));
    case 'maildir': {
      const { messages, skipped } = await listMaildir(options.target);
      return filesFeed(
        stateFile,
        { files: messages, skipped },
        (m) => m.key,
        (m, bytes) =>
          item(options, 'message/rfc822', bytes, m.key, {
            folder: m.folder,
            read: m.read,
            starred: m.starred,
            ...(m.received ? { received: m.received } : {}),
          }),
      );
    }
    case 'folder':
      return folderFeed(options, stateFile);
    case 'photos': {
      // Photos and videos only, each with what its sidecars say (Google Takeout, XMP) and its album.
      const listed = await listFolder(options.target, new Set(Object.values(MEDIA_FILE_TYPES)));
      const photos = await listPhotos(listed.files, listed.skipped, options.target, warn(options));
      return filesFeed(
        stateFile,
        photos,
        (f) => f.version,
        (f, bytes) => photoItem(options, f, bytes, f.key),
      );
    }
    case 'pst':
    case 'olm':
      return outlookFeed(options, stateFile, options.kind);
    case 'takeout': {
      const listing = await listTakeout(options.target, await acceptedTypes(options), warn(options));
      return takeoutFeed(options, stateFile, listing);
    }
  }
}

export const warn = (options: ImportOptions) => (message: string) => options.progress?.write(`${message}\n`);

async function acceptedTypes(options: ImportOptions): Promise<Set<string>> {
  // The server's registry says which types it takes.
  const { handlers } = await options.client.call(Types, {});
  return new Set(handlers.flatMap((h) => h.types));
}
