import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import {
  AccountsList,
  MemexError,
  SourcesGet,
  SourcesList,
  type ParamsOf,
  type ResultOf,
  type SourceSummary,
} from '@memex/contracts';
import type { Static } from '@sinclair/typebox';
import { callMethod, type Bus } from '@memex/bus';
import { workerPrefix } from '@memex/locations';
import { BUS, DATABASE, RpcMethod, type HealthProblems } from '@memex/runtime';
import type { SourceRow, SourcesDatabase } from '../projection/schema.js';
import { PipelineBacklog } from '../watch/pipeline-backlog.js';
import { Watchers } from '../watch/watchers.js';
import { WorkerWatch, type WorkerSeen } from '../watch/worker-watch.js';

type Summary = Static<typeof SourceSummary>;

/** How long `memex sources list` waits for mail-sync's accounts before listing without them. */
const ACCOUNTS_TIMEOUT_MS = 2_000;

/** memex.sources.list|get: the watched folders from this read model, the workers from their heartbeats, the accounts from mail-sync's API. */
@Injectable()
export class SourcesQueries implements HealthProblems {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(DATABASE) private readonly db: Kysely<SourcesDatabase>,
    private readonly watchers: Watchers,
    private readonly workerWatch: WorkerWatch,
    private readonly pipelineBacklog: PipelineBacklog,
  ) {}

  @RpcMethod(SourcesList)
  async list(): Promise<ResultOf<typeof SourcesList>> {
    const rows = await this.db.selectFrom('sources').selectAll().orderBy('id').execute();
    const counts = await this.counts();
    const pipelines = await this.pipelineBacklog.perSource();
    return {
      sources: [
        ...rows.map((row) => this.summary(row, counts.get(row.id), pipelines.get(row.id) ?? 0)),
        ...(await this.workers(pipelines)),
        ...(await this.accounts()),
      ],
    };
  }

  /** The workers this service knows, their items counted in the read model. */
  private async workers(pipelines: Map<string, number>): Promise<Summary[]> {
    const rows = await this.db
      .selectFrom('worker_items')
      .select(['worker', sql<number>`count(*)::int`.as('items')])
      .groupBy('worker')
      .execute();
    const items = new Map(rows.map((row) => [row.worker, row.items]));
    return this.workerWatch
      .known()
      .map((worker) => workerSummary(worker, items.get(worker.name) ?? 0, pipelines.get(`worker.${worker.name}`) ?? 0));
  }

  /** A source in error or away makes the service (and /healthz) degraded, with the reason. */
  async healthProblems(): Promise<string[]> {
    const rows = await this.db
      .selectFrom('sources')
      .select(['id', 'error', 'unreachable_since', 'unreachable_why'])
      .where('paused', '=', false)
      .where((eb) => eb.or([eb('error', 'is not', null), eb('unreachable_since', 'is not', null)]))
      .orderBy('id')
      .execute();
    return rows.map((row) =>
      row.unreachable_since
        ? `source ${row.id} unreachable since ${row.unreachable_since.toISOString()}: ${row.unreachable_why}`
        : `source ${row.id}: ${row.error}`,
    );
  }

  @RpcMethod(SourcesGet)
  async get(params: ParamsOf<typeof SourcesGet>): Promise<ResultOf<typeof SourcesGet>> {
    const row = await this.db.selectFrom('sources').selectAll().where('id', '=', params.id).executeTakeFirst();
    if (!row) {
      const worker = this.workerWatch.known().find((w) => `worker.${w.name}` === params.id);
      if (worker) {
        const workers = await this.workers(await this.pipelineBacklog.perSource());
        return { source: workers.find((s) => s.id === params.id)!, failures: worker.failures };
      }
      const account = (await this.accounts()).find((a) => a.id === params.id);
      if (account) return { source: account, failures: [] };
      throw new MemexError('not_found', `no source ${params.id} (memex sources list)`);
    }
    const failures = await this.db
      .selectFrom('files')
      .select(['path', 'rejected', 'modified_at'])
      .where('source_id', '=', params.id)
      .where('rejected', 'is not', null)
      .orderBy('path')
      .limit(500)
      .execute();
    return {
      source: this.summary(
        row,
        (await this.counts(params.id)).get(row.id),
        (await this.pipelineBacklog.perSource()).get(row.id) ?? 0,
      ),
      failures: failures.map((f) => ({ path: f.path, reason: f.rejected!, modified_at: f.modified_at.toISOString() })),
    };
  }

  private async counts(id?: string): Promise<Map<string, Summary['counts']>> {
    let query = this.db
      .selectFrom('files')
      .select([
        'source_id',
        sql<number>`count(item_id)::int`.as('files'),
        sql<number>`count(distinct item_id)::int`.as('items'),
        sql<number>`count(rejected)::int`.as('failed'),
        sql<number>`count(distinct item_id) filter (where in_place)::int`.as('in_place'),
      ])
      .groupBy('source_id');
    if (id) query = query.where('source_id', '=', id);
    const rows = await query.execute();
    return new Map(rows.map(({ source_id, ...counts }) => [source_id, counts]));
  }

  private summary(row: SourceRow, counts: Summary['counts'] | undefined, pipelineBacklog: number): Summary {
    const settings = row.settings;
    const scan = row.last_scan;
    const reason = row.unreachable_since
      ? `unreachable since ${row.unreachable_since.toISOString()}: ${row.unreachable_why}`
      : row.error;
    return {
      id: row.id,
      kind: row.kind,
      name: settings.name,
      root: row.root,
      managed_by: 'sources',
      state: row.paused ? 'paused' : reason ? 'error' : 'active',
      reason,
      settings: {
        labels: settings.labels,
        media: settings.media,
        in_place_over_bytes: settings.in_place_over_bytes,
        rescan_seconds: settings.rescan_seconds,
      },
      last_scan: scan,
      counts: counts ?? { files: 0, items: 0, failed: 0, in_place: 0 },
      backlog: this.watchers.backlog(row.id),
      pipeline_backlog: pipelineBacklog,
    };
  }

  /** The Google accounts mail-sync (and calendar-sync through it) syncs, as sources; none when mail-sync is not running. */
  private async accounts(): Promise<Summary[]> {
    let answer: ResultOf<typeof AccountsList>;
    try {
      answer = await callMethod(this.bus, AccountsList, {}, { timeoutMs: ACCOUNTS_TIMEOUT_MS });
    } catch (error) {
      if (error instanceof MemexError && (error.code === 'unavailable' || error.code === 'timeout')) return [];
      throw error;
    }
    return answer.accounts.flatMap((account) => {
      const state = account.status === 'active' ? ('active' as const) : ('error' as const);
      const base = {
        name: account.account,
        root: null,
        state,
        reason: account.reason,
        settings: null,
        last_scan: null,
        counts: { files: 0, items: account.sync.messages, failed: 0, in_place: 0 },
        backlog: 0,
      };
      const mail: Summary = { ...base, id: `gmail:${account.account}`, kind: 'gmail', managed_by: 'mail-sync' };
      const calendar: Summary = {
        ...base,
        id: `calendar:${account.account}`,
        kind: 'calendar',
        managed_by: 'calendar-sync',
        counts: { files: 0, items: 0, failed: 0, in_place: 0 },
      };
      return account.scopes.some((scope) => scope.includes('calendar')) ? [mail, calendar] : [mail];
    });
  }
}

/**
 * A `memex worker` as a source (id `worker.<name>`, the source id of its reachability events):
 * its folders, when it was last heard, its items in the read model (the worker sends them to
 * memex.ingest itself: `import:worker:<name>`, search's `source:<name>`; all in place), its files
 * and failed files as its heartbeats count them, and the work waiting for its items: the
 * pipelines' (`memexBacklog`) and the jobs queued on the worker itself.
 */
function workerSummary(worker: WorkerSeen, items: number, memexBacklog: number): Summary {
  const lastSeen = worker.lastSeen?.toISOString() ?? null;
  return {
    id: `worker.${worker.name}`,
    kind: 'worker',
    name: worker.name,
    root: workerPrefix(worker.name),
    managed_by: 'memex worker',
    state: worker.reachable ? 'active' : 'error',
    reason: worker.reachable
      ? null
      : `unreachable: no heartbeat ${lastSeen ? `since ${lastSeen}` : 'since the sources service started'}`,
    settings: null,
    last_scan: null,
    counts: { files: worker.counts?.files ?? items, items, failed: worker.counts?.failed ?? 0, in_place: items },
    backlog: 0,
    pipeline_backlog: memexBacklog + worker.jobs,
    worker: {
      folders: worker.folders,
      last_seen: lastSeen,
      reachable: worker.reachable,
      derives: worker.derives,
      extracts: worker.extracts,
      jobs_waiting: worker.jobs,
    },
  };
}
