import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  Ingest,
  ItemsDelete,
  MemexError,
  OWNER_SCOPE,
  rpcSubject,
  typeOfFileName,
  Types,
  type Actor,
  type MethodDefinition,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { decodeJson, encodeJson, type RpcReply } from '@memex/bus';
import { fileAttributes } from '@memex/exports';
import { differences, externalIdOf, readFile, walk, type DiskFile, type KnownFile } from '@memex/sources';
import type { ExtractServer } from './extract.js';
import type { WorkerState } from './state.js';

/** What one scan of a folder did. */
export interface ScanCounts {
  files: number;
  created: number;
  updated: number;
  moved: number;
  removed: number;
  skipped: number;
  rejected: number;
}

/**
 * Items per memex.ingest request. A located item carries no bytes, and ingest asks this worker to
 * extract each one before it answers: the scan has read them ahead (ExtractServer.readAhead), so
 * the request waits only for ingest's own work, however long the readings took. Without an
 * extractor (`--extract-jobs 0`) ingest reads the bytes through the worker itself.
 */
const BATCH_ITEMS = 25;
const INGEST_TIMEOUT_MS = 300_000;

interface Work {
  file: DiskFile;
  sha256: string;
  externalId: string;
  type: string;
  /** The path the file was known at, when it moved here. */
  movedFrom: string | null;
}

/**
 * Makes the memex hold what a worker's folder holds, with the sources service's scanner parts
 * (walk, hash, compare, external ids): a new file becomes an item located at
 * `worker:<name>:<path>` (its bytes stay here; ingest asks this worker to extract what it
 * needs, ExtractServer), a changed file updates its item, a moved one keeps it (same content),
 * a deleted one deletes it.
 */
export class FolderScan {
  private readonly caller: Actor;
  private accepted: { at: number; types: Set<string> } | null = null;

  constructor(
    private readonly nc: NatsConnection,
    private readonly name: string,
    private readonly state: WorkerState,
    private readonly extractor: ExtractServer | null,
  ) {
    this.caller = { kind: 'system', id: `worker:${name}` };
  }

  /** Compares a folder with the record; `retryFailures`: the files that failed before are read again (a rescan asked for). */
  async scan(folder: string, { retryFailures = false } = {}): Promise<ScanCounts> {
    const known = this.state.known(folder);
    const disk = await walk(folder);
    // Failed files are compared as new, so they are read again; their records (and the failures
    // the heartbeat reports meanwhile) stay until each one's new outcome replaces them.
    const retried = retryFailures ? this.state.failedPaths(folder) : [];
    for (const relative of retried) {
      known.delete(relative);
      if (!disk.has(relative)) this.state.delete(folder, relative); // gone from the disk: no failure left
    }
    const diff = differences([...disk.keys(), ...known.keys()], disk, known);
    const counts: ScanCounts = {
      files: disk.size,
      created: 0,
      updated: 0,
      moved: 0,
      removed: 0,
      skipped: 0,
      rejected: 0,
    };
    const accepted = await this.acceptedTypes();
    const goneByContent = new Map<string, KnownFile[]>();
    for (const row of diff.gone)
      if (row.item_id && row.sha256) goneByContent.set(row.sha256, [...(goneByContent.get(row.sha256) ?? []), row]);

    const work: Work[] = [];
    for (const file of [...diff.fresh, ...diff.changed.map((c) => c.disk)]) {
      const content = await readFile(path.join(folder, file.path), file.size);
      if (!content) continue; // gone meanwhile: the next scan sees it
      const row = known.get(file.path);
      const record = { size: file.size, modified_at: file.modifiedAt.toISOString(), sha256: content.sha256 };
      if (row?.item_id && row.sha256 === content.sha256) {
        this.state.set(folder, file.path, {
          ...record,
          item_id: row.item_id,
          external_id: row.external_id,
          rejected: null,
        });
        continue; // touched, not changed
      }
      const type = typeOfFileName(file.path);
      if (!type || !accepted.has(type)) {
        const reason = `no handler takes ${path.extname(file.path) || 'files without an extension'}`;
        this.state.set(folder, file.path, {
          ...record,
          item_id: null,
          external_id: null,
          rejected: reason,
          unsupported: true,
        });
        counts.skipped++;
        continue;
      }
      const from = row?.item_id ? undefined : goneByContent.get(content.sha256)?.shift();
      work.push({
        file,
        sha256: content.sha256,
        externalId: row?.external_id ?? from?.external_id ?? externalIdOf(file.path, content.sha256),
        type,
        movedFrom: from?.path ?? null,
      });
    }
    for (let i = 0; i < work.length; i += BATCH_ITEMS)
      await this.ingest(folder, work.slice(i, i + BATCH_ITEMS), counts);

    const movedAway = new Set(work.flatMap((w) => (w.movedFrom ? [w.movedFrom] : [])));
    for (const row of diff.gone) {
      if (!movedAway.has(row.path) && row.item_id) {
        await this.call(ItemsDelete, { id: row.item_id }).catch((error: unknown) => {
          // Deleted already (by hand): only the path is left to forget.
          if (!(error instanceof MemexError && error.code === 'not_found')) throw error;
        });
        counts.removed++;
      }
      this.state.delete(folder, row.path);
    }
    this.state.save();
    return counts;
  }

  private async ingest(folder: string, work: Work[], counts: ScanCounts): Promise<void> {
    try {
      await this.send(folder, work, counts);
    } finally {
      // Readings ingest did not ask for (a refused file, an unchanged item, a failed request) go.
      this.extractor?.forget(work.map((w) => path.join(folder, w.file.path)));
    }
  }

  /** Reads the files ahead (with an extractor), sends those that read to memex.ingest, records what each became. */
  private async send(folder: string, work: Work[], counts: ScanCounts): Promise<void> {
    const record = (w: Work) => ({ size: w.file.size, modified_at: w.file.modifiedAt.toISOString(), sha256: w.sha256 });
    const failed = (w: Work, reason: string) => {
      counts.rejected++;
      this.state.set(folder, w.file.path, { ...record(w), item_id: null, external_id: null, rejected: reason });
    };
    const attributes = (w: Work) => fileAttributes(w.type, w.file.path, w.file.modifiedAt.toISOString());
    const batch: Work[] = [];
    if (this.extractor) {
      // Read here first: a file its handler refuses is recorded now, once, and not sent.
      const readings = await Promise.all(
        work.map((w) =>
          this.extractor!.readAhead({ path: path.join(folder, w.file.path), type: w.type, attributes: attributes(w) }),
        ),
      );
      readings.forEach((read, i) => {
        const w = work[i]!;
        if ('rejected' in read) failed(w, read.rejected);
        else if (!('unreadable' in read)) batch.push(w); // gone meanwhile: the next scan sees it
      });
    } else batch.push(...work);
    if (batch.length === 0) return this.state.save();
    const { results } = await this.call(
      Ingest,
      {
        items: batch.map((w) => ({
          type: w.type,
          source: { kind: 'worker', id: this.name },
          external_id: w.externalId,
          location: `worker:${this.name}:${path.join(folder, w.file.path)}`,
          attributes: attributes(w),
        })),
      },
      INGEST_TIMEOUT_MS,
    );
    results.forEach((result, i) => {
      const w = batch[i]!;
      if (result.status === 'rejected' || !result.id) {
        failed(w, result.reason ?? 'rejected');
        return;
      }
      if (w.movedFrom) counts.moved++;
      else if (result.status === 'created') counts.created++;
      else if (result.status === 'updated') counts.updated++;
      this.state.set(folder, w.file.path, {
        ...record(w),
        item_id: result.id,
        external_id: w.externalId,
        rejected: null,
      });
    });
    this.state.save();
  }

  /** The MIME types some handler takes (memex.types), asked again every few minutes. */
  private async acceptedTypes(): Promise<Set<string>> {
    if (this.accepted && Date.now() - this.accepted.at < 5 * 60_000) return this.accepted.types;
    const { handlers } = await this.call(Types, {});
    this.accepted = { at: Date.now(), types: new Set(handlers.flatMap((h) => h.types)) };
    return this.accepted.types;
  }

  /** A memex method over NATS, as the owner (the operator gave this worker the bus's credentials). */
  private async call<M extends MethodDefinition>(
    method: M,
    params: ParamsOf<M>,
    timeoutMs = 60_000,
  ): Promise<ResultOf<M>> {
    let data: Uint8Array;
    try {
      const request = { method: method.name, params, scope: OWNER_SCOPE, caller: this.caller };
      data = (await this.nc.request(rpcSubject(method), encodeJson(request), { timeout: timeoutMs })).data;
    } catch (error) {
      throw new MemexError(
        'unavailable',
        `${method.name} did not answer: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const reply = decodeJson<RpcReply<ResultOf<M>>>(data);
    if ('error' in reply) throw new MemexError(reply.error.code, reply.error.message);
    return reply.result;
  }
}
