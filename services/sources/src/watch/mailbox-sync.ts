import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import {
  isInboxFolder,
  ItemsGet,
  MailFlags,
  MemexError,
  OWNER_SCOPE,
  rpcSubject,
  SourceMailboxRead,
  type MboxTail,
  type MethodDefinition,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { callRpc, EventPublisher, type Bus } from '@memex/bus';
import {
  isGzip,
  LeadingDigest,
  maildirMessage,
  mboxFolder,
  mboxOfTree,
  readMbox,
  type MaildirPlace,
  type MboxMessage,
} from '@memex/exports';
import { BUS } from '@memex/runtime';
import { fileFacts, type DiskFile, type KnownFile } from '../domain/files.js';
import { marksText, mboxOfMessage, messageIdentity, messagePath } from '../domain/mailboxes.js';
import type { SourceRow } from '../projection/schema.js';
import { BATCH_BYTES, BATCH_ITEMS, CALLER, type Answered, type Work } from './work.js';

/** A mailbox read through: what ingest made of the messages sent, and those it no longer holds. */
export type MailboxRead = { answered: Answered[]; gone: KnownFile[] } | { refused: string };

/**
 * Mail in a watched folder: its mboxes (see domain/mailboxes.ts), each read through when it is
 * new or changed, its messages sent as items of their own; and its messages, in mboxes and in
 * Maildir folders, filed as they move between folders or are marked by a client's rename.
 */
@Injectable()
export class MailboxSync {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    private readonly publisher: EventPublisher,
  ) {}

  /**
   * An mbox that is new or changed: its messages that are not items yet, or are under another
   * folder label, are sent (`send`: memex.ingest, recorded at `<mbox>#<id>`), then the mbox is
   * recorded, so a scan reads it again only once it changes. The messages it held that it no
   * longer holds (deleted, expunged, moved to another mbox) are returned for the caller to
   * remove once every mbox is read: a message moved keeps its item. An mbox that cannot be read
   * is refused with the reason, and its messages are kept.
   *
   * An mbox that has only grown since it was read (`tail`: the same bytes before its last
   * message, and that message still there and not deleted) is read from its last message on: a
   * mail client appends new mail to a file that may hold years of it. Any other change (a message
   * marked or deleted in place, a compaction) reads it through. `whole`: read it through anyway.
   */
  async read(
    source: SourceRow,
    root: string,
    file: DiskFile,
    held: ReadonlyMap<string, KnownFile>,
    send: (work: Work[]) => Promise<Answered[]>,
    { tail, whole = false }: { tail: MboxTail | null; whole?: boolean },
  ): Promise<MailboxRead> {
    const full = path.join(root, file.path);
    const answered: Answered[] = [];
    let read: Pass & { tail?: MboxTail };
    try {
      const mbox = file.size === 0 ? { folder: undefined } : await mboxOfTree(full, file.path, file.size);
      if ('skipped' in mbox) throw new Error(mbox.skipped);
      const reading: MboxReading = { source, file, full, folder: mbox.folder, held, answered, send };
      const gzipped = file.size > 0 && (await isGzip(full));
      const leading = new LeadingDigest(full);
      const grown =
        !whole &&
        !gzipped &&
        tail !== null &&
        file.size > tail.offset &&
        (await leading.through(tail.offset)) === tail.before_sha256;
      const from = grown ? tail : null;
      read = (from && (await this.pass(reading, from))) || (await this.pass(reading, null))!;
      if (!gzipped && read.last) read.tail = await tailOf(full, file, leading, read.last);
    } catch (error) {
      // Gone meanwhile: the next look sees it go.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { answered, gone: [] };
      const why = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      return { refused: `the mbox cannot be read (${why}); its messages are kept` };
    }
    const { from, seen, tail: next } = read;
    // Read on from its last message, the mbox still holds every message it held but those that
    // left it before (deleted in an earlier read, their items kept for the grace).
    const stayed = [...held.values()].filter((row) => !row.leaving_since).map((row) => row.path);
    const holds = from === 0 ? seen : new Set([...stayed, ...seen]);
    await this.publisher.publish(SourceMailboxRead, {
      subject: `source:${source.id}`,
      actor: CALLER,
      data: { ...fileFacts(source.id, file), messages: holds.size, read_from: from, ...(next ? { tail: next } : {}) },
    });
    return { answered, gone: [...held.values()].filter((row) => !holds.has(row.path)) };
  }

  /**
   * Reads the mbox's messages from its start, or from its tail on (null when the message there is
   * not the one recorded, or is deleted now: nothing was sent, and it must be read through), and
   * sends those that are new or changed.
   */
  private async pass(
    { source, file, full, folder, held, answered, send }: MboxReading,
    tail: MboxTail | null,
  ): Promise<Pass | null> {
    const from = tail?.offset ?? 0;
    const seen = new Set<string>();
    let last: MessageAt | null = null;
    let work: Work[] = [];
    let bytes = 0;
    const flush = async () => {
      answered.push(...(await send(work)));
      work = [];
      bytes = 0;
    };
    for await (const message of readMbox(full, from)) {
      const { id, marks } = messageIdentity(message.bytes);
      const at = messagePath(file.path, id);
      if (tail && last === null && (at !== tail.message || marks.expunged)) return null;
      if (marks.expunged || seen.has(at)) continue;
      seen.add(at);
      last = { offset: message.offset, path: at };
      // Its folder and its client's marks: either changed, it is sent again (and refiled).
      const sha256 = createHash('sha256')
        .update(`${id}\0${folder ?? ''}\0${marksText(marks)}`)
        .digest('hex');
      const row = held.get(at);
      // Known as it is (and not leaving: a message back in its mbox is recorded again, so it stays).
      if (row?.item_id && row.sha256 === sha256 && !row.leaving_since) continue;
      work.push({ ...messageWork(source, file, at, sha256, message, folder), marks });
      bytes += message.bytes.length;
      if (work.length >= BATCH_ITEMS || bytes >= BATCH_BYTES) await flush();
    }
    await flush();
    return { from, seen, last };
  }

  /**
   * Messages whose places changed while ingest holds them (moved between folders, copied into a
   * second, deleted from one of two, renamed with other Maildir flags) are filed as a mail client
   * shows them: the labels of the folders they came into added, those of the folders they left
   * removed, the inbox a flag (archived once a message is in it no more), read, starred and
   * trashed as a Maildir name says after a move, and read and starred as an mbox's client marked
   * a message it rewrote in place (Thunderbird, mutt). `answered`: what ingest made of what this
   * reconcile sent; `gone`: the rows that went (but moves); `moved`: files moved (the same item);
   * `known`: every row of the source before this reconcile; `leaving`: the paths that went. Mail
   * mirrored from Gmail is left alone: a change would be written to Gmail.
   */
  async refile({
    answered,
    gone,
    moved,
    known,
    leaving,
  }: {
    answered: Answered[];
    gone: KnownFile[];
    moved: Array<{ id: string; from: string; to: string }>;
    known: ReadonlyMap<string, KnownFile>;
    leaving: ReadonlySet<string>;
  }): Promise<void> {
    const touched = new Set<string>();
    for (const { work, id, status } of answered) if (status === 'duplicate' && placeOf(work.file.path)) touched.add(id);
    for (const row of gone) if (row.item_id && placeOf(row.path)) touched.add(row.item_id);
    for (const move of moved) if (placeOf(move.from) || placeOf(move.to)) touched.add(move.id);
    if (touched.size === 0) return;
    const before = new Folders();
    const after = new Folders();
    for (const row of known.values()) {
      if (!row.item_id || !touched.has(row.item_id)) continue;
      before.add(row.item_id, row.path);
      if (!leaving.has(row.path)) after.add(row.item_id, row.path);
    }
    for (const { work, id } of answered) if (touched.has(id)) after.add(id, work.file.path);
    for (const { id, to } of moved) after.add(id, to);
    const marks = new Map(moved.map(({ id, from, to }) => [id, flagsChange(placeOf(from)?.flags, placeOf(to)?.flags)]));
    // A message of an mbox sent again where it was: its client changed the marks in its header.
    for (const { work, id, status } of answered)
      if (status === 'duplicate' && work.marks && known.get(work.file.path)?.item_id === id) {
        const { read, starred } = work.marks;
        marks.set(id, { ...(read === undefined ? {} : { read }), ...(starred === undefined ? {} : { starred }) });
      }
    // One memex.mail.flags call per change, for every message it applies to.
    const changes = new Map<string, { change: FlagsChange; ids: string[] }>();
    for (const id of touched) {
      const now = after.of(id);
      const was = before.of(id);
      if (now.length === 0) continue; // in no folder now: removed with its item
      const change: FlagsChange = { ...marks.get(id) };
      const added = now.filter((folder): folder is string => !isInboxFolder(folder) && !was.includes(folder));
      const removed = was.filter((folder): folder is string => !isInboxFolder(folder) && !now.includes(folder));
      if (added.length > 0) change.add_labels = added;
      if (removed.length > 0) change.remove_labels = removed;
      const inbox = (folders: Array<string | null>) => folders.some(isInboxFolder);
      if (inbox(now) && !inbox(was)) change.archived = false;
      else if (!inbox(now) && inbox(was)) change.archived = true;
      if (Object.keys(change).length === 0) continue;
      const item = await this.call(ItemsGet, { id }).catch(unlessGone);
      if (!item || item.origin === 'mirrored') continue;
      const key = JSON.stringify(change);
      if (!changes.has(key)) changes.set(key, { change, ids: [] });
      changes.get(key)!.ids.push(id);
    }
    for (const { change, ids } of changes.values())
      for (let i = 0; i < ids.length; i += 1000) {
        const some = ids.slice(i, i + 1000);
        // One deleted meanwhile (by hand, or by another scan) fails the call: the rest go one by one.
        if ((await this.call(MailFlags, { ids: some, ...change }).catch(unlessGone)) === null)
          for (const id of some) await this.call(MailFlags, { ids: [id], ...change }).catch(unlessGone);
      }
  }

  private call<M extends MethodDefinition>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
    return callRpc<ResultOf<M>>(
      this.bus,
      rpcSubject(method),
      { method: method.name, params, scope: OWNER_SCOPE, caller: CALLER },
      60_000,
    );
  }
}

type FlagsChange = Omit<ParamsOf<typeof MailFlags>, 'ids'>;

/** Null for an item that is gone (`not_found`); any other failure is the scan's. */
function unlessGone(error: unknown): null {
  if (error instanceof MemexError && error.code === 'not_found') return null;
  throw error;
}
type Marks = Pick<MaildirPlace, 'read' | 'starred' | 'trashed'>;

/**
 * Where a path of the source puts a message: the folder its mbox or Maildir folder stands for
 * (null: none, the inbox), and the marks a Maildir name carries. Null for any other file.
 */
function placeOf(at: string): { folder: string | null; flags?: Marks } | null {
  const mbox = mboxOfMessage(at);
  if (mbox !== null) return { folder: mboxFolder(mbox) ?? null };
  const maildir = maildirMessage(at);
  if (!maildir) return null;
  const { folder, read, starred, trashed } = maildir;
  return { folder, flags: { read, starred, trashed } };
}

/** The marks that differ after a Maildir message was renamed (its client changed its flags). */
function flagsChange(from: Marks | undefined, to: Marks | undefined): FlagsChange {
  if (!from || !to) return {};
  const change: FlagsChange = {};
  for (const mark of ['read', 'starred', 'trashed'] as const) if (from[mark] !== to[mark]) change[mark] = to[mark];
  return change;
}

/** The folders each message is in, by its paths. */
class Folders {
  private readonly byItem = new Map<string, Set<string | null>>();

  add(id: string, at: string): void {
    const place = placeOf(at);
    if (place) this.byItem.set(id, (this.byItem.get(id) ?? new Set()).add(place.folder));
  }

  of(id: string): Array<string | null> {
    return [...(this.byItem.get(id) ?? [])];
  }
}

/** A message of an mbox on its way into memex.ingest, labelled with the folder the mbox stands for. */
function messageWork(
  source: SourceRow,
  mbox: DiskFile,
  at: string,
  sha256: string,
  message: MboxMessage,
  folder: string | undefined,
): Work {
  const externalId = `mail:${at.slice(at.lastIndexOf('#') + 1)}`;
  return {
    file: { path: at, size: message.bytes.length, modifiedAt: mbox.modifiedAt },
    sha256,
    externalId,
    inPlace: false,
    item: {
      type: 'message/rfc822',
      source: { kind: source.kind, id: source.id },
      external_id: externalId,
      labels: source.settings.labels,
      attributes: { ...(folder ? { folder } : {}), ...(message.received ? { received: message.received } : {}) },
      data: '',
    },
    data: message.bytes,
    dataBytes: message.bytes.length,
  };
}

/** A message of an mbox being read: where it starts and its path among the source's files. */
interface MessageAt {
  offset: number;
  path: string;
}

/** What a pass over an mbox read: from which byte, the messages it holds there on, the last of them. */
interface Pass {
  from: number;
  seen: Set<string>;
  last: MessageAt | null;
}

/** What a pass over an mbox reads and sends with. */
interface MboxReading {
  source: SourceRow;
  file: DiskFile;
  full: string;
  folder: string | undefined;
  held: ReadonlyMap<string, KnownFile>;
  answered: Answered[];
  send: (work: Work[]) => Promise<Answered[]>;
}

/**
 * Where the next read of the mbox may start: its last message, and a digest of the bytes before it.
 * None when the file changed since the scan looked at it (a client wrote while it was read): the
 * digest might be of bytes other than those read, so the next read goes through the whole file.
 */
async function tailOf(
  full: string,
  file: DiskFile,
  leading: LeadingDigest,
  last: MessageAt,
): Promise<MboxTail | undefined> {
  const before = await leading.through(last.offset);
  const now = await stat(full);
  if (before === null || now.size !== file.size || now.mtime.getTime() !== file.modifiedAt.getTime()) return undefined;
  return { offset: last.offset, before_sha256: before, message: last.path };
}
