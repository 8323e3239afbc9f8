import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Kysely } from 'kysely';
import {
  Ingest,
  INGEST_REQUEST_LIMIT_BYTES,
  MEDIA_FILE_TYPES,
  OWNER_SCOPE,
  SourceFileRecorded,
  SourceFileRejected,
  rpcSubject,
  type Actor,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { callRpc, draftOf, EventPublisher, type Bus, type Drafted } from '@memex/bus';
import {
  isMessageFile,
  listFolder,
  listPhotos,
  listTakeout,
  photoMetadata,
  readMbox,
  takeoutMessage,
  type FolderFile,
  type PhotoFile,
} from '@memex/exports';
import { fileLocation } from '@memex/locations';
import { BUS, DATABASE } from '@memex/runtime';
import { readsInPlace } from '../domain/files.js';
import type { Settings, SourceRow, SourcesDatabase } from '../projection/schema.js';
import type { ScanCounts } from './folder-sync.js';

/** The kinds of source that are an export read whole on each scan, not a folder of files. */
export const EXPORT_KINDS = new Set(['takeout', 'photo-library']);

type ItemParams = ParamsOf<typeof Ingest>['items'][number];

/** One thing of an export on its way to memex.ingest: what the source records for it once it is an item. */
interface Entry {
  /** Its path in the export: a file's, or `<mbox>#gmail:<id>` for a message. */
  path: string;
  /** What it holds, as far as the memex cares: a changed hash sends it again. */
  sha256: string;
  size: number;
  modifiedAt: Date;
  externalId: string;
  inPlace: boolean;
  item: ItemParams;
  dataBytes: number;
}

const BATCH_ITEMS = 200;
const BATCH_BYTES = 24 * 1024 * 1024;
const CALLER: Actor = { kind: 'system', id: 'sources' };

const sha256 = (...parts: Array<Buffer | string>) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest('hex');
};

/**
 * A Google Takeout or a photo library (docs/sources.md "Exports"), read with `@memex/exports` as
 * `memex import takeout|photos` reads them: every message and file is an entry whose hash covers
 * what the memex takes from it (a message's bytes with its Gmail labels; a photo's bytes with
 * its sidecars and albums), recorded as `source.file_recorded`, so a rescan — on a newer export
 * unpacked in the same folder — sends only what is new or changed: a new message or photo is
 * created, a message with other labels is updated (ingest applies them), nothing is stored twice.
 * What a newer export no longer has is kept: an export is a snapshot, and one unpacked in part
 * must not delete anything.
 */
@Injectable()
export class ExportSync {
  private readonly logger = new Logger('memex:sources');

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(DATABASE) private readonly db: Kysely<SourcesDatabase>,
    private readonly publisher: EventPublisher,
  ) {}

  async reconcile(source: SourceRow, root: string, accepted: Set<string>): Promise<ScanCounts> {
    const rows = await this.db
      .selectFrom('files')
      .select(['path', 'sha256'])
      .where('source_id', '=', source.id)
      .where('item_id', 'is not', null)
      .execute();
    const known = new Map(rows.map((row) => [row.path, row.sha256]));
    const counts: ScanCounts = { files: 0, ingested: 0, updated: 0, moved: 0, removed: 0, failed: 0 };
    let batch: Entry[] = [];
    let bytes = 0;
    const send = async (entry: Entry) => {
      counts.files++;
      if (known.get(entry.path) === entry.sha256) return;
      if (entry.dataBytes > INGEST_REQUEST_LIMIT_BYTES) {
        await this.publisher.publishAll([this.rejected(source, entry, `it is too large to copy in one request`)]);
        counts.failed++;
        return;
      }
      if (batch.length >= BATCH_ITEMS || bytes + entry.dataBytes > BATCH_BYTES) {
        await this.ingest(source, batch, counts);
        batch = [];
        bytes = 0;
      }
      batch.push(entry);
      bytes += entry.dataBytes;
    };
    const warn = (message: string) => this.logger.warn(`${source.id}: ${message}`);
    const settings = source.settings as Settings;
    if (source.kind === 'takeout') {
      const listing = await listTakeout(root, accepted, warn);
      for (const mbox of listing.mboxes) {
        const modifiedAt = (await fs.stat(mbox.file)).mtime;
        for await (const message of readMbox(mbox.file)) {
          const { externalId } = takeoutMessage(message.bytes, message.sender);
          const hash = sha256(message.bytes);
          const id = externalId ?? `${mbox.key}#${hash.slice(0, 32)}`;
          const item: ItemParams = {
            ...this.base(source, 'message/rfc822', id),
            data: message.bytes.toString('base64'),
            attributes: message.received ? { received: message.received } : {},
          };
          await send({
            path: `${mbox.key}#${id}`,
            sha256: hash,
            size: message.bytes.length,
            modifiedAt,
            externalId: id,
            inPlace: false,
            item,
            dataBytes: message.bytes.length,
          });
        }
      }
      for (const photo of listing.photos) await send(await this.photo(source, settings, photo));
      for (const document of listing.documents) await send(await this.document(source, settings, document));
    } else {
      const listed = await listFolder(root, new Set(Object.values(MEDIA_FILE_TYPES)));
      const photos = await listPhotos(listed.files, listed.skipped, root, warn);
      for (const photo of photos.files) await send(await this.photo(source, settings, photo));
    }
    if (batch.length > 0) await this.ingest(source, batch, counts);
    return counts;
  }

  private base(source: SourceRow, type: string, externalId: string) {
    return {
      type,
      source: { kind: source.kind, id: source.id },
      external_id: externalId,
      labels: (source.settings as Settings).labels,
    };
  }

  /** A photo with what its sidecars and album say (its embedded XMP is the handler's); read in place as the source's settings say. */
  private async photo(source: SourceRow, settings: Settings, photo: PhotoFile): Promise<Entry> {
    const bytes = await fs.readFile(photo.file);
    const { attributes, labels } = photoMetadata(photo);
    const inPlace = readsInPlace(settings, photo.type, photo.size);
    const base = this.base(source, photo.type, photo.key);
    return {
      path: photo.key,
      sha256: sha256(bytes, JSON.stringify([attributes, labels])),
      size: photo.size,
      modifiedAt: new Date(photo.modified),
      externalId: photo.key,
      inPlace,
      item: {
        ...base,
        labels: [...new Set([...base.labels, ...labels])],
        attributes,
        ...(inPlace ? { location: fileLocation(photo.file) } : { data: bytes.toString('base64') }),
      },
      dataBytes: inPlace ? 0 : bytes.length,
    };
  }

  private async document(
    source: SourceRow,
    settings: Settings,
    file: FolderFile & { labels?: string[] },
  ): Promise<Entry> {
    const bytes = await fs.readFile(file.file);
    const inPlace = readsInPlace(settings, file.type, file.size);
    const base = this.base(source, file.type, file.key);
    const labels = file.labels ?? [];
    return {
      path: file.key,
      // A Keep note's labels count, as a photo's albums do: relabelled in a newer export, it is sent again.
      sha256: labels.length > 0 ? sha256(bytes, JSON.stringify(labels)) : sha256(bytes),
      size: file.size,
      modifiedAt: new Date(file.modified),
      externalId: file.key,
      inPlace,
      item: {
        ...base,
        labels: [...new Set([...base.labels, ...labels])],
        attributes: isMessageFile(file.type)
          ? { modified: file.modified }
          : { filename: path.posix.basename(file.key), modified: file.modified },
        ...(inPlace ? { location: fileLocation(file.file) } : { data: bytes.toString('base64') }),
      },
      dataBytes: inPlace ? 0 : bytes.length,
    };
  }

  private async ingest(source: SourceRow, batch: Entry[], counts: ScanCounts): Promise<void> {
    const answer = await callRpc<ResultOf<typeof Ingest>>(
      this.bus,
      rpcSubject(Ingest),
      { method: Ingest.name, params: { items: batch.map((e) => e.item) }, scope: OWNER_SCOPE, caller: CALLER },
      120_000,
    );
    const drafts: Drafted[] = answer.results.map((result, i) => {
      const entry = batch[i]!;
      if (result.status === 'rejected' || !result.id) {
        counts.failed++;
        return this.rejected(source, entry, result.reason ?? 'rejected');
      }
      if (result.status === 'created') counts.ingested++;
      else if (result.status === 'updated') counts.updated++;
      return draftOf(SourceFileRecorded, {
        subject: `item:${result.id}`,
        actor: CALLER,
        data: {
          source_id: source.id,
          path: entry.path,
          size: entry.size,
          modified_at: entry.modifiedAt.toISOString(),
          item_id: result.id,
          sha256: entry.sha256,
          external_id: entry.externalId,
          in_place: entry.inPlace,
        },
      });
    });
    await this.publisher.publishAll(drafts);
  }

  private rejected(source: SourceRow, entry: Entry, reason: string): Drafted {
    return draftOf(SourceFileRejected, {
      subject: `source:${source.id}`,
      actor: CALLER,
      data: {
        source_id: source.id,
        path: entry.path,
        size: entry.size,
        modified_at: entry.modifiedAt.toISOString(),
        reason,
      },
    });
  }
}
