import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Kysely } from 'kysely';
import {
  Ingest,
  INGEST_REQUEST_LIMIT_BYTES,
  MemexError,
  Types,
  type Actor,
  type IngestResult,
  type ParamsOf,
  type ResultOf,
  type Scope,
} from '@memex/contracts';
import type { Static } from '@sinclair/typebox';
import { EventPublisher, type Bus } from '@memex/bus';
import { BlobSpaceError, BlobStore } from '@memex/blobs';
import { visibleTo } from '@memex/db';
import { Locations } from '@memex/locations';
import type { MemexConfig } from '@memex/config';
import { BUS, CONFIG, DATABASE, RpcMethod, type CallContext, type HealthProblems } from '@memex/runtime';
import { createRegistry, RejectedItem } from '../domain/handlers/index.js';
import type { IngestDatabase } from '../projection/schema.js';
import { IdentityLog } from './identities.js';
import { ItemStore, keysOf, type StoreOutcome } from './item-store.js';
import { KeyedQueue, mapLimit } from './keyed-queue.js';
import { LagGate } from './lag-gate.js';
import { ThreadJoins } from './thread-joins.js';
import { threadIds } from '../projection/threads.js';
import { ParsePool } from './parse.js';
import { checkRequestSize, prepareItem, type ItemReaders, type PreparedItem } from './prepare.js';

type Result = Static<typeof IngestResult>;

/** Items read at once per request (by the worker threads of the ParsePool). */
const PARSE_CONCURRENCY = 16;
/**
 * memex.ingest requests one process works on at once (MEMEX_INGEST_MAX_REQUESTS). Each holds up
 * to 40 MB of items, decoded and parsed, so more are refused as `unavailable` (HTTP 503 with
 * Retry-After; clients send them again) rather than taken on: a client faster than the memex
 * waits, and the service's memory stays bounded however fast it is sent to.
 */
const MAX_REQUESTS = Number(process.env.MEMEX_INGEST_MAX_REQUESTS) || 8;

/** memex.ingest and memex.types: the one way items get in (seed §4.5). */
@Injectable()
export class IngestService implements OnModuleInit, OnApplicationShutdown, HealthProblems {
  private readonly logger = new Logger('memex:ingest');
  private readonly registry = createRegistry();
  private readonly reader = new ParsePool();
  private readonly queue = new KeyedQueue();
  private requests = 0;
  private readonly identities: IdentityLog;
  private readonly store: ItemStore;
  private readonly readers: ItemReaders;
  private readonly lagGate: LagGate<IngestDatabase>;

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    publisher: EventPublisher,
    private readonly blobs: BlobStore,
    @Inject(DATABASE) private readonly db: Kysely<IngestDatabase>,
    locations: Locations,
    @Inject(CONFIG) config: MemexConfig,
    private readonly threadJoins: ThreadJoins,
  ) {
    this.lagGate = new LagGate(bus, db, config.ingestMaxLag);
    this.identities = new IdentityLog(bus, publisher, db);
    this.store = new ItemStore(this.identities, publisher, blobs);
    // A worker's files are read by the worker itself (docs/sources.md "Workers").
    this.readers = { reader: this.reader, registry: this.registry, locations, workers: bus.nc };
  }

  /** Before memex.ingest is served (the host serves it once every module is initialized). */
  async onModuleInit(): Promise<void> {
    await this.identities.startClaimsCopy();
  }

  @RpcMethod(Types)
  async types(): Promise<ResultOf<typeof Types>> {
    return {
      handlers: this.registry.list().map(({ limitBytes, ...handler }) => ({ ...handler, limit_bytes: limitBytes })),
      request_limit_bytes: INGEST_REQUEST_LIMIT_BYTES,
    };
  }

  /**
   * One result per item, in order. Problems with an item reject that item only; a failure of the
   * log or the disk fails the request (nothing is reported stored that is not), and sending the
   * batch again is safe: stored items come back as duplicates.
   */
  @RpcMethod(Ingest)
  async ingest(params: ParamsOf<typeof Ingest>, call: CallContext): Promise<ResultOf<typeof Ingest>> {
    await this.lagGate.check();
    if (this.requests >= MAX_REQUESTS) {
      throw new MemexError(
        'unavailable',
        `memex.ingest is busy with ${this.requests} requests (at most ${MAX_REQUESTS} at once): send this one again in a few seconds`,
      );
    }
    this.requests++;
    try {
      return await this.ingestBatch(params, call);
    } finally {
      this.requests--;
    }
  }

  private async ingestBatch(params: ParamsOf<typeof Ingest>, call: CallContext): Promise<ResultOf<typeof Ingest>> {
    checkRequestSize(params.items);
    const results: Result[] = new Array(params.items.length);
    const prepared = await mapLimit(params.items, PARSE_CONCURRENCY, async (item, index) => {
      try {
        return await prepareItem(this.readers, item, index, call.scope, call.caller, params.batch ?? null);
      } catch (error) {
        results[index] = this.rejected(error, index);
        return null;
      }
    });
    const accepted = prepared.filter((item): item is PreparedItem => item !== null);
    const keys = accepted.map(keysOf);
    const known = await this.identities.known(accepted.map((item) => ({ ...item, identity: item.parsed.identity })));
    const actor: Actor = call.caller.kind === 'connector' ? call.caller : { kind: 'import', id: call.caller.id };
    const plans = await this.store.planNew(accepted, keys, known, actor).catch(retryLater);
    let seq = 0;
    const stored = await Promise.allSettled(
      accepted.map(async (item, i) => {
        const itemKeys = keys[i]!;
        const queueKeys = itemKeys.source ? [itemKeys.source, itemKeys.content] : [itemKeys.content];
        try {
          const outcome = await this.queue.run(queueKeys, () =>
            this.store.store(item, itemKeys, known, actor, plans[i]),
          );
          seq = Math.max(seq, outcome.seq ?? 0);
          results[item.index] = this.result(outcome, item);
        } catch (error) {
          if (!(error instanceof RejectedItem)) throw error;
          results[item.index] = this.rejected(error, item.index);
        }
      }),
    );
    const failure = stored.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failure) retryLater(failure.reason);
    // A new message naming other messages' ids may join threads that were apart.
    const replies = accepted.filter(
      (item) =>
        item.parsed.kind === 'email' &&
        results[item.index]?.status === 'created' &&
        threadIds(item.parsed.meta, item.parsed.identity).length > 1,
    );
    await this.threadJoins.publishFor(
      replies.map((item) => results[item.index]!.id!),
      seq,
      actor,
    );
    if (call.scope.kind === 'agent') await this.hideInvisible(results, call.scope);
    // Nothing new written: the log's end still covers the items the duplicates name.
    return { results, seq: seq || (await this.bus.lastSeq()) };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.reader.close();
  }

  /** A full blob disk: /healthz is degraded until a write succeeds again. */
  async healthProblems(): Promise<string[]> {
    return [this.blobs.spaceProblem(), this.identities.problem()].filter((problem) => problem !== undefined);
  }

  private result(outcome: StoreOutcome, item: PreparedItem): Result {
    const warnings =
      outcome.status !== 'duplicate' && item.parsed.warnings.length > 0 ? { warnings: item.parsed.warnings } : {};
    return { status: outcome.status, id: outcome.id, ...warnings };
  }

  private rejected(error: unknown, index: number): Result {
    if (!(error instanceof RejectedItem)) throw error;
    if (error.unexpected)
      this.logger.error(`item ${index}: ${error.reason}`, (error.cause as Error | undefined)?.stack);
    return { status: 'rejected', reason: error.reason };
  }

  /** An agent learns that an item exists only if it may see it: a duplicate outside its scope has no id. */
  private async hideInvisible(results: Result[], scope: Scope): Promise<void> {
    const ids = results.flatMap((r) => (r.id ? [r.id] : []));
    if (ids.length === 0) return;
    const visible = new Set(
      (await this.db.selectFrom('items').select('id').where('id', 'in', ids).where(visibleTo(scope)).execute()).map(
        (r) => r.id,
      ),
    );
    for (const result of results) {
      if (result.status === 'duplicate' && result.id && !visible.has(result.id)) delete result.id;
    }
  }
}

/**
 * A blob disk with no room is a state the owner can end (free space): the request fails as
 * `unavailable`, which clients send again, and nothing of it was stored (no event names a blob
 * that was not written). Other failures go on as they are.
 */
function retryLater(error: unknown): never {
  if (error instanceof BlobSpaceError) throw new MemexError('unavailable', error.message);
  throw error;
}
