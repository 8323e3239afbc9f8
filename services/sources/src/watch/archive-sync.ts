import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Injectable } from '@nestjs/common';
import { INGEST_REQUEST_LIMIT_BYTES, SourceArchiveRead } from '@memex/contracts';
import { EventPublisher } from '@memex/bus';
import {
  fileAttributes,
  files,
  MBOX_TYPE,
  passedOverReason,
  readEnex,
  typeOfFile,
  UnreadableZip,
  walkFolder,
  ZIP_FILE,
  ZipArchives,
  type NotebookEntry,
  type NotebookSkip,
} from '@memex/exports';
import type { ArchiveKind } from '../domain/archives.js';
import { externalIdOf, fileFacts, type DiskFile, type KnownFile } from '../domain/files.js';
import type { SourceRow } from '../projection/schema.js';
import { PassedOverFiles, type PassedOverList } from './passed-over.js';
import { BATCH_BYTES, BATCH_ITEMS, CALLER, type Answered, type Work } from './work.js';

/**
 * Bounds on what one zip of a watched folder may inflate to: past them it is passed over, saying
 * why, and nothing of it is read. A zip bomb (a few kilobytes that inflate to gigabytes) passes
 * neither; a zip of documents, which deflate two to ten times, passes both.
 */
export const ZIP_LIMITS = {
  /** Everything its readable files hold together. */
  maxBytes: 4 * 1024 ** 3,
  /** How many times its size they may hold, once they hold more than `ratioFloorBytes`. */
  maxRatio: 100,
  ratioFloorBytes: 32 * 1024 ** 2,
};

/**
 * An archive read: what ingest made of the members sent, those it held that it no longer holds,
 * and what of it was passed over, by why. `refused`: it cannot be read at all (its members are
 * kept); `skipped`: it is not read, for that reason (a zip bomb; its members are kept).
 */
export type ArchiveRead =
  | { answered: Answered[]; gone: KnownFile[]; passedOver: PassedOverList; damaged?: string }
  | { refused: string }
  | { skipped: string };

/** What reading an archive needs of the folder's reconcile. */
export interface ArchiveReading {
  /** The types some handler takes (memex.types, data types left out). */
  accepted: ReadonlySet<string>;
  /** memex.ingest, recording what each member became. */
  send: (work: Work[]) => Promise<Answered[]>;
  /** A member that cannot be sent: recorded as refused, with why, and counted as failed. */
  reject: (member: DiskFile, reason: string) => Promise<void>;
}

/** What a pass over an archive's members is building up. */
class Pass {
  readonly answered: Answered[] = [];
  readonly seen = new Set<string>();
  readonly passedOver = new PassedOverFiles();
  sent = 0;
  unchanged = 0;
  private work: Work[] = [];
  private bytes = 0;

  constructor(
    readonly held: ReadonlyMap<string, KnownFile>,
    readonly reading: ArchiveReading,
  ) {}

  /** Known as it is (and not leaving: a member back in its archive is recorded again, so it stays). */
  known(at: string, sha256: string): boolean {
    const row = this.held.get(at);
    if (!row?.item_id || row.sha256 !== sha256 || row.leaving_since) return false;
    this.seen.add(at);
    this.unchanged++;
    return true;
  }

  async add(one: Work): Promise<void> {
    this.seen.add(one.file.path);
    if (one.dataBytes > INGEST_REQUEST_LIMIT_BYTES) {
      const size = Math.round(one.dataBytes / 1024 / 1024);
      await this.reading.reject(one.file, `it is ${size} MB: too large to copy in one request; unpack it to read it`);
      return;
    }
    this.sent++;
    this.work.push(one);
    this.bytes += one.dataBytes;
    if (this.work.length >= BATCH_ITEMS || this.bytes >= BATCH_BYTES) await this.flush();
  }

  async reject(member: DiskFile, reason: string): Promise<void> {
    this.seen.add(member.path);
    await this.reading.reject(member, reason);
  }

  async flush(): Promise<void> {
    if (this.work.length > 0) this.answered.push(...(await this.reading.send(this.work)));
    this.work = [];
    this.bytes = 0;
  }
}

/** Why an export that does not end as Evernote ends one is read only in part. */
const CUT_SHORT =
  'the export ends cut short (no </en-export>: written still, or copied in part): its notes were read up to there, and those it held are kept';

/** Whether an Evernote export ends as Evernote writes one, with `</en-export>` (a file being written does not yet). */
async function endsWhole(full: string): Promise<boolean> {
  const handle = await fs.open(full, 'r');
  try {
    const { size } = await handle.stat();
    const tail = Buffer.alloc(Math.min(size, 256));
    await handle.read(tail, 0, tail.length, size - tail.length);
    return /<\/en-export>\s*$/.test(tail.toString('latin1'));
  } finally {
    await handle.close();
  }
}

const sha256 = (...parts: Array<Buffer | string>) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest('hex');
};

/**
 * Zips and Evernote exports in a watched folder (see domain/archives.ts), each read through when
 * it is new or changed, its members that are new or changed sent as items of their own (as
 * `memex import folder` sends them), then the archive recorded (source.archive_read), so a scan
 * reads it again only once it changes. The members it held that it no longer holds are returned
 * for the caller to remove (after the grace, as an mbox's messages).
 */
@Injectable()
export class ArchiveSync {
  constructor(private readonly publisher: EventPublisher) {}

  async read(
    source: SourceRow,
    root: string,
    file: DiskFile,
    kind: ArchiveKind,
    held: ReadonlyMap<string, KnownFile>,
    reading: ArchiveReading,
  ): Promise<ArchiveRead> {
    const full = path.join(root, file.path);
    const pass = new Pass(held, reading);
    let damaged: string | undefined;
    try {
      if (kind === 'enex') damaged = await this.notebook(source, full, file, pass);
      else {
        const read = await this.zip(source, full, file, pass);
        if (read) return read;
      }
      await pass.flush();
    } catch (error) {
      // Gone meanwhile: the next look sees it go.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT')
        return { answered: pass.answered, gone: [], passedOver: [] };
      throw error;
    }
    const passedOver = pass.passedOver.reasons();
    await this.publisher.publish(SourceArchiveRead, {
      subject: `source:${source.id}`,
      actor: CALLER,
      data: {
        ...fileFacts(source.id, file),
        archive: kind,
        members: pass.seen.size,
        sent: pass.sent,
        unchanged: pass.unchanged,
        passed_over: passedOver,
        ...(damaged ? { damaged: damaged.slice(0, 2000) } : {}),
      },
    });
    // Read only in part, it may hold what could not be read: its members are kept.
    const gone = damaged ? [] : [...held.values()].filter((row) => !pass.seen.has(row.path));
    return { answered: pass.answered, gone, passedOver, ...(damaged ? { damaged } : {}) };
  }

  /**
   * An Evernote export's notes and their attachments, as `memex import folder` sends them (each
   * keyed by its note's identity, not its place); what it cannot read is passed over with why.
   * Returns why it stopped short, when its bytes could not be read to the end.
   */
  private async notebook(source: SourceRow, full: string, file: DiskFile, pass: Pass): Promise<string | undefined> {
    const entries = readEnex(full, file.path)[Symbol.asyncIterator]();
    for (;;) {
      let next: IteratorResult<NotebookEntry | NotebookSkip>;
      try {
        next = await entries.next();
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw error;
        return `the export is damaged (${(error as Error).message}): what follows was not read; its notes are kept`;
      }
      if (next.done) return (await endsWhole(full)) ? undefined : CUT_SHORT;
      const entry = next.value;
      if ('skipped' in entry) {
        pass.passedOver.add(entry.key, entry.skipped);
        continue;
      }
      if (!pass.reading.accepted.has(entry.type)) {
        pass.passedOver.add(entry.key, `an attachment of a note, of a type no handler takes (${entry.type})`);
        continue;
      }
      const labels = [...new Set([...source.settings.labels, ...entry.labels])];
      // A note edited (or retagged) in a newer export is sent again; the same note is not.
      const hash = sha256(entry.bytes, '\0', JSON.stringify([entry.type, entry.attributes, labels]));
      if (pass.known(entry.key, hash)) continue;
      await pass.add({
        file: { path: entry.key, size: entry.bytes.length, modifiedAt: file.modifiedAt },
        sha256: hash,
        externalId: entry.key,
        inPlace: false,
        item: {
          type: entry.type,
          source: { kind: source.kind, id: source.id },
          external_id: entry.key,
          labels,
          attributes: entry.attributes,
          data: '',
        },
        data: entry.bytes,
        dataBytes: entry.bytes.length,
      });
    }
  }

  /**
   * A zip's files, read as the files of a folder at the zip's path (hidden files, macOS's
   * `__MACOSX`, a saved page's parts passed over as a folder's are), a file known by its CRC-32
   * and size, so a zip written again sends only what changed. What nothing reads, what is
   * encrypted, and a zip inside it are passed over with why; a zip that inflates past
   * `ZIP_LIMITS` is not read at all; one that cannot be opened is refused.
   */
  private async zip(source: SourceRow, full: string, file: DiskFile, pass: Pass): Promise<ArchiveRead | null> {
    let archives: ZipArchives;
    try {
      archives = await ZipArchives.open([full]);
    } catch (error) {
      if (error instanceof UnreadableZip) return { refused: `${error.reason}; the items of its files are kept` };
      throw error;
    }
    try {
      const inflated = archives.uncompressedBytes;
      const mb = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`;
      if (inflated > ZIP_LIMITS.maxBytes)
        return {
          skipped: `a zip archive that unpacks to ${mb(inflated)}, more than a watched folder reads from one zip (${mb(ZIP_LIMITS.maxBytes)}): unpack it to read it`,
        };
      if (inflated > ZIP_LIMITS.ratioFloorBytes && inflated > ZIP_LIMITS.maxRatio * Math.max(1, file.size))
        return {
          skipped:
            `a zip archive that unpacks to ${mb(inflated)} from ${Math.ceil(file.size / 1024)} KB ` +
            `(over ${ZIP_LIMITS.maxRatio} times its size, as a zip bomb does): not read`,
        };
      const prefix = `${file.path}/`;
      for (const skipped of archives.skipped) pass.passedOver.add(prefix + skipped.key, skipped.reason);
      const skipped = await walkFolder(full, async ({ file: member, key, name, stat }, skip) => {
        const at = prefix + key;
        const entry = archives.entryOf(key);
        if (!entry) return skip('not a file of the zip');
        const disk: DiskFile = { path: at, size: stat.size, modifiedAt: stat.mtime };
        const version = sha256(`zip\0${entry.crc32}\0${entry.size}`);
        if (pass.known(at, version)) return;
        if (ZIP_FILE.test(name)) return skip('a zip inside a zip: unpack it to read it');
        if (/\.enex$/i.test(name)) return skip('an Evernote export inside a zip: unpack it to read it');
        let type: string | null;
        let bytes: Buffer;
        try {
          type = await typeOfFile(member, name);
          if (type === MBOX_TYPE) return skip('an mbox inside a zip: unpack it to read it');
          if (!type || !pass.reading.accepted.has(type)) return skip(passedOverReason(name, type));
          if (entry.size > INGEST_REQUEST_LIMIT_BYTES)
            return void (await pass.reject(
              disk,
              `it is ${mb(entry.size)}: too large to copy in one request; unpack it to read it`,
            ));
          bytes = await files.readFile(member);
        } catch (error) {
          // A damaged file of the zip (its checksum, its data): that file's failure, not the zip's.
          return void (await pass.reject(disk, (error as Error).message));
        }
        const row = pass.held.get(at);
        const externalId = row?.item_id && row.external_id ? row.external_id : externalIdOf(at, version);
        await pass.add({
          file: disk,
          sha256: version,
          externalId,
          inPlace: false,
          item: {
            type,
            source: { kind: source.kind, id: source.id },
            external_id: externalId,
            labels: source.settings.labels,
            attributes: fileAttributes(type, at, stat.mtime.toISOString()),
            data: '',
          },
          data: bytes,
          dataBytes: bytes.length,
        });
      });
      for (const one of skipped) pass.passedOver.add(prefix + one.key, one.reason);
      return null;
    } finally {
      await pass.flush();
      archives.close();
    }
  }
}
