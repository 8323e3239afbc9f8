import fs from 'node:fs/promises';
import path from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Kysely } from 'kysely';
import {
  Ingest,
  INGEST_REQUEST_LIMIT_BYTES,
  ItemsDelete,
  LocationReachable,
  LocationUnreachable,
  MemexError,
  OWNER_SCOPE,
  SourceFileDropped,
  SourceFileLeaving,
  SourceFileMoved,
  SourceFileRecorded,
  SourceFileRejected,
  SourceScanned,
  Types,
  type Actor,
  rpcSubject,
  type ResultOf,
} from '@memex/contracts';
import { callRpc, draftOf, EventPublisher, type Bus, type Drafted } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import {
  FOLDER_DATA_TYPES,
  MBOX_TYPE,
  fileAttributes,
  isPartialEmlx,
  passedOverReason,
  typeOfFile,
} from '@memex/exports';
import { fileLocation } from '@memex/locations';
import { BUS, CONFIG, DATABASE, ServiceHost } from '@memex/runtime';
import { differences, externalIdOf, fileFacts, readsInPlace, type DiskFile, type KnownFile } from '../domain/files.js';
import { splitMailboxRows } from '../domain/mailboxes.js';
import type { SourceRow, SourcesDatabase } from '../projection/schema.js';
import { archiveKindOf, type ArchiveKind } from '../domain/archives.js';
import { ArchiveSync } from './archive-sync.js';
import { EXPORT_KINDS, ExportSync } from './export-sync.js';
import { MailboxSync } from './mailbox-sync.js';
import { PassedOverFiles } from './passed-over.js';
import { BATCH_BYTES, BATCH_ITEMS, CALLER, type Answered, type ItemParams, type Work } from './work.js';
import { emptyRoot, isIgnored, keptApart, readContent, rootPath, rootProblem, statFile, walk } from './disk.js';

export interface ScanCounts {
  files: number;
  ingested: number;
  updated: number;
  moved: number;
  removed: number;
  failed: number;
}

/**
 * A reconcile's outcome: what changed, or that the root is away (nothing was touched).
 * `recheckInMs`: files that went keep their items until then; a scan then deletes them.
 */
export type Reconciled =
  { counts: ScanCounts; rootMissing: false; recheckInMs?: number } | { rootMissing: true; why: string };

/** Paths to look at after watcher events: files, and folders (everything known under them). */
export interface Touched {
  path: string;
  folder: boolean;
}

/**
 * Makes the memex hold what a watched folder holds (the whole folder on a scan, or the paths a
 * watcher reported): new files become items, changed files update theirs, moved files keep
 * theirs (matched by content between what went and what came), deleted files delete theirs.
 * A root that is gone changes nothing: its items are marked unreachable until it returns.
 */
@Injectable()
export class FolderSync {
  private readonly logger = new Logger('memex:sources');
  private types: { at: number; accepted: Set<string> } | null = null;

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(DATABASE) private readonly db: Kysely<SourcesDatabase>,
    @Inject(CONFIG) private readonly config: MemexConfig,
    private readonly publisher: EventPublisher,
    private readonly host: ServiceHost,
    private readonly exports: ExportSync,
    private readonly mailboxes: MailboxSync,
    private readonly archives: ArchiveSync,
  ) {}

  /**
   * Null when the source is gone or paused. `retryFailures` (a rescan asked for): the files
   * ingest refused before are sent again, changed or not.
   */
  async reconcile(
    sourceId: string,
    touched: Touched[] | null,
    { retryFailures = false } = {},
  ): Promise<Reconciled | null> {
    // Decisions read the read model: it must hold this service's own last events.
    await this.host.projector!.caughtUp(this.config.minSeqTimeoutMs);
    const source = await this.db.selectFrom('sources').selectAll().where('id', '=', sourceId).executeTakeFirst();
    if (!source || source.paused) return null;
    const root = rootPath(source.root);
    const rows = await this.db
      .selectFrom('files')
      .select([
        'path',
        'item_id',
        'external_id',
        'sha256',
        'in_place',
        'size',
        'modified_at',
        'rejected',
        'mailbox',
        'mbox_tail',
        'leaving_since',
        'archive',
        'archive_passed_over',
      ])
      .where('source_id', '=', sourceId)
      .execute();
    const known = new Map<string, KnownFile>(rows.map((row) => [row.path, row]));
    // The files on disk are compared with the disk; an mbox's messages with the mbox (MailboxSync.read).
    const { files, messages } = splitMailboxRows(rows);
    const problem = (await rootProblem(root)) ?? (files.size > 0 ? await emptyRoot(root, files.size) : null);
    if (problem) {
      if (!source.unreachable_since) await this.location(LocationUnreachable, source, problem);
      return { rootMissing: true, why: problem };
    }
    if (source.unreachable_since) await this.location(LocationReachable, source);

    const started = new Date();
    if (EXPORT_KINDS.has(source.kind)) {
      // A Takeout or a photo library is read whole (export-sync.ts), whatever a watcher reported.
      const counts = await this.exports.reconcile(source, root, await this.acceptedTypes());
      await this.publisher.publish(SourceScanned, {
        subject: `source:${source.id}`,
        actor: CALLER,
        data: { id: source.id, started_at: started.toISOString(), ...counts },
      });
      return { counts, rootMissing: false };
    }
    const { disk, paths } = await this.look(root, files, touched);
    // A folder on disk named like a zip (`old.zip/`): what is found in it are files, not a zip's.
    for (const held of messages.values())
      for (const [at, row] of held)
        if (disk.has(at)) {
          held.delete(at);
          files.set(at, row);
        }
    // Files that went and keep their items a while are looked at every time: gone still, back, or moved.
    for (const row of files.values()) {
      if (!row.leaving_since || disk.has(row.path)) continue;
      const file = await statFile(root, path.join(root, row.path));
      if (file) disk.set(file.path, file);
      paths.push(row.path);
    }
    const diff = differences(paths, disk, files);
    if (retryFailures) {
      // Files ingest refused, and mboxes with a message it refused, are read again.
      const refused = new Set([...files.values()].filter((row) => row.rejected !== null).map((row) => row.path));
      for (const [mbox, held] of messages)
        if ([...held.values()].some((row) => row.rejected !== null)) refused.add(mbox);
      const changed = new Set(diff.changed.map((c) => c.disk.path));
      for (const path of refused) {
        const file = disk.get(path);
        const row = files.get(path);
        if (file && row && !changed.has(path)) diff.changed.push({ disk: file, known: row });
      }
    }
    const counts: ScanCounts = { files: disk.size, ingested: 0, updated: 0, moved: 0, removed: 0, failed: 0 };
    const accepted = await this.acceptedTypes();

    // What came: new files (or moved ones) and changed ones of types a handler reads, with their
    // type (by name, else by content: a Maildir's messages have no extension) and content hash.
    // A file Apple Mail keeps apart from a `.partial.emlx` is no item: it is sent inside it.
    const looked = [...diff.fresh, ...diff.changed.map((c) => c.disk)];
    const apart = keptApart(root, looked);
    const passedOver = new PassedOverFiles();
    const read = new Map<string, { type: string; sha256: string; bytes: Buffer | null }>();
    const mailboxes: DiskFile[] = [];
    const archives: Array<{ file: DiskFile; kind: ArchiveKind }> = [];
    for (const file of looked) {
      if (apart.has(file.path)) continue;
      const full = path.join(root, file.path);
      try {
        // A zip or an Evernote export is read as its members (archive-sync.ts).
        const kind = archiveKindOf(file.path);
        if (kind) {
          archives.push({ file, kind });
          continue;
        }
        // A known mbox stays one when it is emptied (Thunderbird's Trash, emptied).
        const type = files.get(file.path)?.mailbox || messages.has(file.path) ? MBOX_TYPE : await typeOfFile(full);
        if (type === MBOX_TYPE) {
          mailboxes.push(file);
          continue;
        }
        if (!type || !accepted.has(type)) {
          passedOver.add(file.path, passedOverReason(file.path, type));
          continue;
        }
        const content = await readContent(root, file);
        if (content) read.set(file.path, { type, ...content });
      } catch (error) {
        // Gone since the walk: the next look sees it go.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        // One unreadable file (permissions, a bad sector) is that file's failure, not the scan's.
        const why = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
        await this.publishRejected(source, file, `the file cannot be read (${why})`);
        counts.failed++;
      }
    }
    // A file that went and one that came with the same content is a move: the same item.
    const goneByContent = new Map<string, KnownFile[]>();
    for (const row of diff.gone) {
      if (row.item_id && row.sha256) goneByContent.set(row.sha256, [...(goneByContent.get(row.sha256) ?? []), row]);
    }
    const movedAway = new Set<string>();
    const moved: Array<{ id: string; from: string; to: string }> = [];
    const work: Work[] = [];
    const drafts: Drafted[] = [];
    for (const file of diff.fresh) {
      const content = read.get(file.path);
      if (!content) continue;
      const from = goneByContent.get(content.sha256)?.shift();
      if (from) {
        movedAway.add(from.path);
        moved.push({ id: from.item_id!, from: from.path, to: file.path });
        if (from.in_place) work.push(this.work(source, root, file, content, from.external_id!, from));
        else drafts.push(this.movedDraft(source, from, file));
        counts.moved++;
        continue;
      }
      work.push(this.work(source, root, file, content, externalIdOf(file.path, content.sha256)));
    }
    for (const { disk: file, known: row } of diff.changed) {
      const content = read.get(file.path);
      if (!content) continue;
      if (row.item_id && content.sha256 === row.sha256) {
        // Touched, not changed: only its time is new.
        drafts.push(this.recordedDraft(source, file, row.item_id, content.sha256, row.external_id!, row.in_place));
        continue;
      }
      const externalId = row.item_id ? row.external_id! : externalIdOf(file.path, content.sha256);
      work.push(this.work(source, root, file, content, externalId));
    }
    if (drafts.length > 0) await this.publisher.publishAll(drafts);
    const answered = await this.ingest(source, work, counts);
    // Messages that went: those of an mbox that went, and those an mbox read again no longer holds.
    const goneMessages = new Map<string, KnownFile>();
    const messagesGone = (rows: Iterable<KnownFile>) => {
      for (const row of rows) goneMessages.set(row.path, row);
    };
    for (const mbox of new Set([...paths, ...(touched === null ? messages.keys() : [])]))
      if (!disk.has(mbox)) messagesGone(messages.get(mbox)?.values() ?? []);
    const send = (batch: Work[]) => this.ingest(source, batch, counts);
    for (const file of mailboxes) {
      const held = messages.get(file.path) ?? new Map<string, KnownFile>();
      const tail = files.get(file.path)?.mbox_tail ?? null;
      const read = await this.mailboxes.read(source, root, file, held, send, { tail, whole: retryFailures });
      if ('refused' in read) {
        await this.publishRejected(source, file, read.refused);
        counts.failed++;
        continue;
      }
      answered.push(...read.answered);
      messagesGone(read.gone);
    }
    const reject = async (member: DiskFile, reason: string) => {
      await this.publishRejected(source, member, reason);
      counts.failed++;
    };
    for (const { file, kind } of archives) {
      const held = messages.get(file.path) ?? new Map<string, KnownFile>();
      const reading = { accepted, send, reject };
      const read = await this.archives.read(source, root, file, kind, held, reading);
      if ('refused' in read) {
        await this.publishRejected(source, file, read.refused);
        counts.failed++;
        continue;
      }
      if ('skipped' in read) {
        passedOver.add(file.path, read.skipped);
        continue;
      }
      answered.push(...read.answered);
      messagesGone(read.gone);
      for (const reason of read.passedOver) passedOver.addCounted(reason);
      // Read only in part (listed with the failures, as the archive's row says).
      if (read.damaged) counts.failed++;
    }
    // What of an archive not read this time (unchanged since) was passed over when it was read.
    const archivesRead = new Set(archives.map(({ file }) => file.path));
    for (const row of files.values())
      if (row.archive && row.archive_passed_over && disk.has(row.path) && !archivesRead.has(row.path))
        for (const reason of row.archive_passed_over) passedOver.addCounted(reason);
    // Messages that went from an mbox not read this time (unchanged since) and keep their items a while.
    const readNow = new Set([...mailboxes.map((file) => file.path), ...archivesRead]);
    for (const [mbox, held] of messages)
      if (!readNow.has(mbox)) messagesGone([...held.values()].filter((row) => row.leaving_since));
    const gone = [...diff.gone.filter((row) => !movedAway.has(row.path)), ...goneMessages.values()];
    const leaving = new Set([...diff.gone, ...goneMessages.values()].map((row) => row.path));
    await this.mailboxes.refile({ answered, gone, moved, known, leaving });
    const recorded = new Set(answered.map((answer) => answer.id));
    const recheckInMs = await this.remove(source, gone, known, leaving, recorded, counts);
    if (touched === null) {
      await this.publisher.publish(SourceScanned, {
        subject: `source:${source.id}`,
        actor: CALLER,
        data: { id: source.id, started_at: started.toISOString(), ...counts, passed_over: passedOver.reasons() },
      });
    }
    return { counts, rootMissing: false, ...(recheckInMs === null ? {} : { recheckInMs }) };
  }

  /** The files on disk the reconcile looks at, and every path to compare. */
  private async look(
    root: string,
    known: Map<string, KnownFile>,
    touched: Touched[] | null,
  ): Promise<{ disk: Map<string, DiskFile>; paths: string[] }> {
    if (touched === null) {
      const disk = await walk(root);
      return { disk, paths: [...disk.keys(), ...known.keys()] };
    }
    const disk = new Map<string, DiskFile>();
    const paths: string[] = [];
    for (const { path: relative, folder } of touched) {
      if (isIgnored(root, relative)) continue;
      if (folder) {
        await walk(root, path.join(root, relative), disk);
        for (const key of known.keys()) if (key.startsWith(`${relative}/`)) paths.push(key);
        continue;
      }
      paths.push(relative);
      const file = await statFile(root, path.join(root, relative));
      if (file) disk.set(file.path, file);
    }
    paths.push(...disk.keys());
    return { disk, paths };
  }

  private work(
    source: SourceRow,
    root: string,
    file: DiskFile,
    { type, sha256, bytes }: { type: string; sha256: string; bytes: Buffer | null },
    externalId: string,
    movedFrom?: KnownFile,
  ): Work {
    const settings = source.settings;
    const full = path.join(root, file.path);
    const inPlace = readsInPlace(settings, type, file.size);
    const base = {
      type,
      source: { kind: source.kind, id: source.id },
      external_id: externalId,
      labels: settings.labels,
      attributes: fileAttributes(type, file.path, file.modifiedAt.toISOString()),
    };
    const item: ItemParams = inPlace ? { ...base, location: fileLocation(full) } : { ...base, data: '' };
    return {
      file,
      sha256,
      externalId,
      inPlace,
      item,
      dataBytes: inPlace ? 0 : file.size,
      ...(movedFrom ? { movedFrom } : {}),
      // A `.partial.emlx` is sent with its parts put back: bytes that are not the file's.
      ...(!inPlace && bytes && isPartialEmlx(file.path) ? { data: bytes, dataBytes: bytes.length } : {}),
    };
  }

  /** Sends the work in batches and records what each file became. */
  private async ingest(source: SourceRow, work: Work[], counts: ScanCounts): Promise<Answered[]> {
    const recorded: Answered[] = [];
    let batch: Work[] = [];
    let bytes = 0;
    const flush = async () => {
      if (batch.length > 0) recorded.push(...(await this.ingestBatch(source, batch, counts)));
      batch = [];
      bytes = 0;
    };
    for (const one of work) {
      if (one.dataBytes > INGEST_REQUEST_LIMIT_BYTES) {
        const size = `it is ${Math.round(one.dataBytes / 1024 / 1024)} MB: too large to copy in one request`;
        const reason = one.data
          ? `${size} (a message is copied)`
          : `${size}; read it in place (memex sources configure ${source.id} --media in-place)`;
        await this.publishRejected(source, one.file, reason);
        counts.failed++;
        continue;
      }
      if (batch.length >= BATCH_ITEMS || bytes + one.dataBytes > BATCH_BYTES) await flush();
      batch.push(one);
      bytes += one.dataBytes;
    }
    await flush();
    return recorded;
  }

  private async ingestBatch(source: SourceRow, batch: Work[], counts: ScanCounts): Promise<Answered[]> {
    const root = rootPath(source.root);
    const items: ItemParams[] = [];
    const sent: Work[] = [];
    for (const one of batch) {
      if (one.inPlace) {
        items.push(one.item);
        sent.push(one);
        continue;
      }
      const bytes = one.data ?? (await fs.readFile(path.join(root, one.file.path)).catch(() => null));
      if (!bytes) continue; // gone meanwhile: the watcher reports it
      items.push({ ...one.item, data: bytes.toString('base64') });
      sent.push(one);
    }
    if (items.length === 0) return [];
    const answer = await callRpc<ResultOf<typeof Ingest>>(
      this.bus,
      rpcSubject(Ingest),
      { method: Ingest.name, params: { items }, scope: OWNER_SCOPE, caller: CALLER },
      120_000,
    );
    const drafts: Drafted[] = [];
    const recorded: Answered[] = [];
    for (const [i, result] of answer.results.entries()) {
      const one = sent[i]!;
      if (result.status === 'rejected' || !result.id) {
        counts.failed++;
        drafts.push(this.rejectedDraft(source, one.file, result.reason ?? 'rejected'));
        continue;
      }
      recorded.push({ work: one, id: result.id, status: result.status });
      if (one.movedFrom && one.movedFrom.item_id === result.id) {
        drafts.push(this.movedDraft(source, one.movedFrom, one.file));
        continue;
      }
      if (result.status === 'created') counts.ingested++;
      else if (result.status === 'updated') counts.updated++;
      drafts.push(this.recordedDraft(source, one.file, result.id, one.sha256, one.externalId, one.inPlace));
    }
    await this.publisher.publishAll(drafts);
    return recorded;
  }

  /**
   * Files and messages that went: each takes its item with it (and what derives from it), unless
   * another path of the source still names the same item (identical copies are one item), or
   * this reconcile recorded it at another path (a message moved to another mbox). An item is
   * deleted only once its file has been gone for the grace (`goneGraceSeconds`): a sync tool may
   * delete a message here before it writes it in another folder, or replace a file by deleting
   * it first. Until then the path is `leaving` (source.file_leaving). Returns in how long the
   * next of those is due, or null.
   */
  private async remove(
    source: SourceRow,
    gone: KnownFile[],
    known: Map<string, KnownFile>,
    leaving: ReadonlySet<string>,
    recorded: ReadonlySet<string>,
    counts: ScanCounts,
  ): Promise<number | null> {
    const now = Date.now();
    const grace = this.config.goneGraceSeconds * 1000;
    let recheckInMs: number | null = null;
    const staying = new Set(recorded);
    for (const row of known.values()) if (row.item_id && !leaving.has(row.path)) staying.add(row.item_id);
    for (const row of gone) {
      if (!row.item_id) {
        await this.publisher.publish(SourceFileDropped, {
          subject: `source:${source.id}`,
          actor: CALLER,
          data: { source_id: source.id, path: row.path, item_id: null },
        });
        continue;
      }
      if (staying.has(row.item_id)) {
        await this.publisher.publish(SourceFileDropped, {
          subject: `item:${row.item_id}`,
          actor: CALLER,
          data: { source_id: source.id, path: row.path, item_id: row.item_id },
        });
        continue;
      }
      const since = row.leaving_since?.getTime() ?? now;
      if (now < since + grace) {
        if (!row.leaving_since) {
          await this.publisher.publish(SourceFileLeaving, {
            subject: `item:${row.item_id}`,
            actor: CALLER,
            data: { source_id: source.id, path: row.path, item_id: row.item_id, since: new Date(now).toISOString() },
          });
        }
        recheckInMs = Math.min(recheckInMs ?? Infinity, since + grace - now);
        continue;
      }
      if (!(await this.deleteItem(row.item_id))) {
        // Deleted already (by hand): only the path is left to forget.
        await this.publisher.publish(SourceFileDropped, {
          subject: `source:${source.id}`,
          actor: CALLER,
          data: { source_id: source.id, path: row.path, item_id: null },
        });
      }
      counts.removed++;
    }
    return recheckInMs;
  }

  /** memex.items.delete: the item and what derives from it; false when it was gone already. */
  async deleteItem(id: string, caller: Actor = CALLER): Promise<boolean> {
    try {
      await callRpc(
        this.bus,
        rpcSubject(ItemsDelete),
        { method: ItemsDelete.name, params: { id }, scope: OWNER_SCOPE, caller },
        60_000,
      );
      return true;
    } catch (error) {
      if (error instanceof MemexError && error.code === 'not_found') return false;
      throw error;
    }
  }

  private recordedDraft(
    source: SourceRow,
    file: DiskFile,
    itemId: string,
    sha256: string,
    externalId: string,
    inPlace: boolean,
  ): Drafted {
    return draftOf(SourceFileRecorded, {
      subject: `item:${itemId}`,
      actor: CALLER,
      data: {
        ...fileFacts(source.id, file),
        item_id: itemId,
        sha256,
        external_id: externalId,
        in_place: inPlace,
      },
    });
  }

  private movedDraft(source: SourceRow, from: KnownFile, to: DiskFile): Drafted {
    return draftOf(SourceFileMoved, {
      subject: `item:${from.item_id}`,
      actor: CALLER,
      data: {
        source_id: source.id,
        item_id: from.item_id!,
        from: from.path,
        to: to.path,
        modified_at: to.modifiedAt.toISOString(),
      },
    });
  }

  private rejectedDraft(source: SourceRow, file: DiskFile, reason: string): Drafted {
    return draftOf(SourceFileRejected, {
      subject: `source:${source.id}`,
      actor: CALLER,
      data: {
        ...fileFacts(source.id, file),
        reason,
      },
    });
  }

  private async publishRejected(source: SourceRow, file: DiskFile, reason: string): Promise<void> {
    await this.publisher.publishAll([this.rejectedDraft(source, file, reason)]);
  }

  private async location(
    definition: typeof LocationUnreachable | typeof LocationReachable,
    source: SourceRow,
    why = '',
  ): Promise<void> {
    this.logger.log(`${source.id}: ${definition === LocationUnreachable ? `unreachable: ${why}` : 'reachable again'}`);
    const data = { source_id: source.id, prefix: source.root };
    if (definition === LocationUnreachable)
      await this.publisher.publish(LocationUnreachable, {
        subject: `source:${source.id}`,
        actor: CALLER,
        data: { ...data, why },
      });
    else await this.publisher.publish(LocationReachable, { subject: `source:${source.id}`, actor: CALLER, data });
  }

  /** The MIME types some handler takes (memex.types) but data files', asked again every few minutes. */
  private async acceptedTypes(): Promise<Set<string>> {
    if (this.types && Date.now() - this.types.at < 5 * 60_000) return this.types.accepted;
    const answer = await callRpc<ResultOf<typeof Types>>(
      this.bus,
      rpcSubject(Types),
      { method: Types.name, params: {}, scope: OWNER_SCOPE, caller: CALLER },
      30_000,
    );
    const types = answer.handlers.flatMap((h) => h.types).filter((type) => !FOLDER_DATA_TYPES.has(type));
    this.types = { at: Date.now(), accepted: new Set(types) };
    return this.types.accepted;
  }
}
