import {
  Inject,
  Injectable,
  Module,
  type BeforeApplicationShutdown,
  type DynamicModule,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { BlobStore } from '@memex/blobs';
import { builtinGloveTablePath } from '@memex/embeddings';
import { EventPublisher, type Bus } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { BUS, CONFIG, MemexModule } from '@memex/runtime';
import { JobQueue } from './jobs/queue.js';
import { Scheduler } from './jobs/scheduler.js';
import { upgradeBuiltinSpace } from './domain/models/builtin-upgrade.js';
import { logTier0Version } from './domain/structure/tier0-upgrade.js';
import { ModelRegistry } from './domain/models/registry.js';
import { ModelsService } from './commands/models.service.js';
import { JobsService } from './commands/jobs.service.js';
import { WorkerPool, workersFromEnv } from './workers/pool.js';
import { Budgets } from './domain/understanding/budgets.js';
import { Lanes } from './domain/understanding/lanes.js';
import { tier2ConcurrencyFromEnv, UnderstandingRunner } from './domain/understanding/runner.js';
import { RerunService } from './commands/rerun.service.js';
import { SummarizeService } from './commands/summarize.service.js';

export interface PipelinesOptions {
  /** Worker threads in this process (default MEMEX_PIPELINE_WORKERS, else 2). */
  workers?: number;
  /** Tier-2 requests in flight per chat model (default MEMEX_TIER2_CONCURRENCY, else 4). */
  tier2Concurrency?: number;
  /** The clock budgets' windows turn by (tests move it a day on). */
  clock?: () => number;
  /** A failed tier-1 job's first retry waits this long, doubling each time (default 1 s; tests shorten it). */
  retryBaseMs?: number;
}

/** Starts the scheduler and the worker threads after the connections are up; stops them before they close. */
@Injectable()
class PipelinesRunner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly abort = new AbortController();
  private following: Promise<void> | undefined;

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    private readonly publisher: EventPublisher,
    private readonly queue: JobQueue,
    private readonly models: ModelRegistry,
    private readonly scheduler: Scheduler,
    private readonly pool: WorkerPool,
    private readonly understanding: UnderstandingRunner,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.queue.ensure();
    await this.models.load(this.bus);
    await upgradeBuiltinSpace(this.bus, this.publisher, this.models);
    await logTier0Version(this.publisher);
    this.following = this.models.follow(this.bus, this.abort.signal).catch((error) => {
      if (!this.abort.signal.aborted) console.error('pipelines: following models failed:', error);
    });
    await this.scheduler.start();
    // The built-in embedder's table is converted from its package on first use: once, here, rather
    // than by every worker thread at once on its first job (7 s of CPU each, in the middle of an import).
    if (this.pool.workers > 0) await builtinGloveTablePath();
    await this.pool.start();
    await this.understanding.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.understanding.stop();
    await this.pool.stop();
    await this.scheduler.stop();
    this.abort.abort();
    await this.following;
    this.queue.close();
  }
}

/**
 * Tier 1 (seed §5): a scheduler turning the log into prioritized jobs on MEMEX_JOBS and a pool of
 * workers that split items into passages and embed them. No read model: what it derives is
 * published as events, which the search projector reads.
 */
@Module({})
export class PipelinesModule {
  static register(config: MemexConfig, options: PipelinesOptions = {}): DynamicModule {
    const workers = options.workers ?? workersFromEnv();
    return {
      module: PipelinesModule,
      imports: [MemexModule.forService({ service: 'pipelines', config })],
      providers: [
        { provide: JobQueue, useFactory: (bus: Bus) => new JobQueue(bus), inject: [BUS] },
        ModelRegistry,
        { provide: Lanes, useFactory: (bus: Bus) => new Lanes(bus), inject: [BUS] },
        { provide: Budgets, useFactory: () => new Budgets(options.clock) },
        {
          provide: Scheduler,
          useFactory: (bus: Bus, queue: JobQueue, models: ModelRegistry, lanes: Lanes) =>
            new Scheduler(bus, queue, models, lanes),
          inject: [BUS, JobQueue, ModelRegistry, Lanes],
        },
        {
          provide: UnderstandingRunner,
          useFactory: (
            bus: Bus,
            publisher: EventPublisher,
            cfg: MemexConfig,
            models: ModelRegistry,
            lanes: Lanes,
            budgets: Budgets,
          ) =>
            new UnderstandingRunner(
              bus,
              publisher,
              new BlobStore(cfg.blobsDir),
              models,
              lanes,
              budgets,
              options.tier2Concurrency ?? tier2ConcurrencyFromEnv(),
            ),
          inject: [BUS, EventPublisher, CONFIG, ModelRegistry, Lanes, Budgets],
        },
        RerunService,
        SummarizeService,
        {
          provide: WorkerPool,
          useFactory: (cfg: MemexConfig) =>
            new WorkerPool(workers, {
              natsUrl: cfg.natsUrl,
              blobsDir: cfg.blobsDir,
              retryBaseMs: options.retryBaseMs,
            }),
          inject: [CONFIG],
        },
        ModelsService,
        JobsService,
        PipelinesRunner,
      ],
    };
  }
}
