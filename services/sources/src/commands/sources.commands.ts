import fs from 'node:fs/promises';
import path from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import {
  MemexError,
  SourceAdded,
  SourceConfigured,
  SourcePaused,
  SourceRemoved,
  SourceResumed,
  SourcesAdd,
  SourcesConfigure,
  SourcesPause,
  SourcesRemove,
  SourcesRescan,
  SourcesResume,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { EventPublisher, type Bus } from '@memex/bus';
import { WORKER_NAME_PATTERN, workerSubject, type WorkerRescanReply } from '@memex/locations';
import type { MemexConfig } from '@memex/config';
import { BUS, CONFIG, DATABASE, RpcMethod, ServiceHost, type CallContext } from '@memex/runtime';
import { sourceIdFor } from '../domain/files.js';
import type { Settings, SourcesDatabase } from '../projection/schema.js';
import { FolderSync } from '../watch/folder-sync.js';
import { Watchers } from '../watch/watchers.js';

/** The safety-net rescan of a watched folder, unless configured otherwise. */
const DEFAULT_RESCAN_SECONDS = 15 * 60;
/** How long a worker's rescan is waited for (it reads its changed and failed files first). */
const WORKER_RESCAN_MS = 10 * 60_000;

/** memex.sources.add|configure|pause|resume|rescan|remove. */
@Injectable()
export class SourcesCommands {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(DATABASE) private readonly db: Kysely<SourcesDatabase>,
    @Inject(CONFIG) private readonly config: MemexConfig,
    private readonly publisher: EventPublisher,
    private readonly host: ServiceHost,
    private readonly watchers: Watchers,
    private readonly sync: FolderSync,
  ) {}

  @RpcMethod(SourcesAdd)
  async add(params: ParamsOf<typeof SourcesAdd>, call: CallContext): Promise<ResultOf<typeof SourcesAdd>> {
    if (!path.isAbsolute(params.path))
      throw new MemexError('invalid_params', `path ${JSON.stringify(params.path)} must be absolute on the memex host`);
    const folder = path.resolve(params.path);
    const stat = await fs.stat(folder).catch(() => null);
    if (stat?.isFile() && /\.zip$/i.test(folder))
      throw new MemexError(
        'invalid_params',
        `${folder} is a zip archive, and a source is a folder: memex import takeout (or import folder) reads a zip as it is`,
      );
    if (!stat?.isDirectory())
      throw new MemexError('invalid_params', `${folder} is not a folder the memex host can read`);
    await this.caughtUp();
    const sources = await this.db.selectFrom('sources').select(['id', 'root']).execute();
    const root = `file:${folder === '/' ? '' : folder}/`;
    const same = sources.find((s) => s.root === root);
    if (same) throw new MemexError('conflict', `${folder} is already watched as source ${same.id}`);
    const nested = sources.find((s) => root.startsWith(s.root) || s.root.startsWith(root));
    if (nested)
      throw new MemexError(
        'conflict',
        `${folder} overlaps source ${nested.id} (${nested.root}): a file would belong to two sources`,
      );
    const taken = new Set(sources.map((s) => s.id));
    if (params.id && taken.has(params.id)) throw new MemexError('conflict', `there is already a source ${params.id}`);
    // `worker.<name>` are the workers' ids (memex sources lists them beside the folders).
    if (params.id?.startsWith('worker.'))
      throw new MemexError(
        'invalid_params',
        `source ids starting with "worker." are the workers'; choose another --id`,
      );
    const id = params.id ?? sourceIdFor(path.basename(folder).replace(/^worker\./i, 'worker-'), taken);
    const settings: Settings = {
      name: params.name ?? path.basename(folder),
      labels: [...new Set(params.labels ?? [])].sort(),
      media: params.media ?? 'auto',
      in_place_over_bytes: params.in_place_over_bytes ?? null,
      rescan_seconds: params.rescan_seconds ?? DEFAULT_RESCAN_SECONDS,
      options: {},
    };
    const { seq } = await this.publisher.publish(SourceAdded, {
      subject: `source:${id}`,
      actor: call.caller,
      expectFirst: true,
      data: { id, kind: params.kind, root, settings },
    });
    await this.caughtUp();
    await this.watchers.start(id);
    return { id, seq };
  }

  @RpcMethod(SourcesConfigure)
  async configure(
    params: ParamsOf<typeof SourcesConfigure>,
    call: CallContext,
  ): Promise<ResultOf<typeof SourcesConfigure>> {
    const { id, ...changes } = params;
    const current = (await this.source(id)).settings as Settings;
    const settings: Settings = {
      ...current,
      ...Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)),
      ...(changes.labels ? { labels: [...new Set(changes.labels)].sort() } : {}),
    };
    const { seq } = await this.publisher.publish(SourceConfigured, {
      subject: `source:${id}`,
      actor: call.caller,
      data: { id, settings },
    });
    return { seq };
  }

  @RpcMethod(SourcesPause)
  async pause(params: ParamsOf<typeof SourcesPause>, call: CallContext): Promise<ResultOf<typeof SourcesPause>> {
    const source = await this.source(params.id);
    await this.watchers.stop(params.id);
    if (source.paused) return { seq: await this.bus.lastSeq() };
    const { seq } = await this.publisher.publish(SourcePaused, {
      subject: `source:${params.id}`,
      actor: call.caller,
      data: { id: params.id },
    });
    return { seq };
  }

  @RpcMethod(SourcesResume)
  async resume(params: ParamsOf<typeof SourcesResume>, call: CallContext): Promise<ResultOf<typeof SourcesResume>> {
    const source = await this.source(params.id);
    let seq = await this.bus.lastSeq();
    if (source.paused) {
      ({ seq } = await this.publisher.publish(SourceResumed, {
        subject: `source:${params.id}`,
        actor: call.caller,
        data: { id: params.id },
      }));
      await this.caughtUp();
    }
    await this.watchers.start(params.id);
    return { seq };
  }

  /** A folder's scan, or a worker's (`worker.<name>`: it scans its own folders); the files that failed are read again. */
  @RpcMethod(SourcesRescan)
  async rescan(params: ParamsOf<typeof SourcesRescan>): Promise<ResultOf<typeof SourcesRescan>> {
    const worker = /^worker\.(.+)$/.exec(params.id)?.[1];
    if (worker && WORKER_NAME_PATTERN.test(worker)) return this.rescanWorker(worker);
    const source = await this.source(params.id);
    if (source.paused) throw new MemexError('conflict', `source ${params.id} is paused: resume it (it rescans then)`);
    const outcome = await this.watchers.rescan(params.id, { retryFailures: true });
    if (!outcome) throw new MemexError('not_found', `no source ${params.id}`);
    if (outcome.rootMissing)
      throw new MemexError('unavailable', `source ${params.id} cannot be scanned: ${outcome.why}`);
    return { ...outcome.counts, seq: await this.bus.lastSeq() };
  }

  private async rescanWorker(name: string): Promise<ResultOf<typeof SourcesRescan>> {
    let reply: WorkerRescanReply;
    try {
      const answer = await this.bus.nc.request(workerSubject(name, 'rescan'), '{}', { timeout: WORKER_RESCAN_MS });
      reply = answer.json<WorkerRescanReply>();
    } catch (error) {
      throw new MemexError(
        'unavailable',
        `worker "${name}" did not answer the rescan (${error instanceof Error ? error.message : String(error)}): is it running? (memex sources list)`,
      );
    }
    if ('error' in reply) throw new MemexError('unavailable', `worker "${name}" could not scan ${reply.error}`);
    const { created, ...counts } = reply;
    return { ...counts, ingested: created, seq: await this.bus.lastSeq() };
  }

  /** Stops watching first, so no scan adds what is being deleted. */
  @RpcMethod(SourcesRemove)
  async remove(params: ParamsOf<typeof SourcesRemove>, call: CallContext): Promise<ResultOf<typeof SourcesRemove>> {
    await this.source(params.id);
    await this.watchers.stop(params.id);
    let deleted = 0;
    if (params.delete_items) {
      const items = await this.db
        .selectFrom('files')
        .select('item_id')
        .distinct()
        .where('source_id', '=', params.id)
        .where('item_id', 'is not', null)
        .execute();
      for (const { item_id } of items) if (await this.sync.deleteItem(item_id!, call.caller)) deleted++;
    }
    const { seq } = await this.publisher.publish(SourceRemoved, {
      subject: `source:${params.id}`,
      actor: call.caller,
      data: { id: params.id, items_deleted: params.delete_items ?? false },
    });
    return { deleted_items: deleted, seq };
  }

  private async source(id: string) {
    await this.caughtUp();
    const source = await this.db.selectFrom('sources').selectAll().where('id', '=', id).executeTakeFirst();
    if (!source) throw new MemexError('not_found', `no source ${id} (memex sources list)`);
    return source;
  }

  private caughtUp(): Promise<void> {
    return this.host.projector!.caughtUp(this.config.minSeqTimeoutMs);
  }
}
