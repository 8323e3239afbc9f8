import type { INestApplicationContext } from '@nestjs/common';
import {
  ItemDeleted,
  type ItemKind,
  type MethodDefinition,
  NotePut,
  OWNER_SCOPE,
  type ParamsOf,
  type ResultOf,
  type Scope,
  noteMarkdownOf,
} from '@memex/contracts';
import { BlobStore } from '@memex/blobs';
import { Bus, callMethod, EVENTS_STREAM, EventPublisher, JOBS_STREAM, newId, bindDraft } from '@memex/bus';
import { PipelinesModule } from '@memex/pipelines';
import { ServiceHost, startService } from '@memex/runtime';
import { createTestEnv, itemMeta, type TestEnv } from '@memex/testing';
import { SearchModule } from './search.module.js';

export interface TestItem {
  title: string;
  text: string;
  kind?: ItemKind;
  labels?: string[];
  spam?: boolean;
  occurred_at?: string;
  source?: { kind: string; id: string };
  meta?: Record<string, unknown>;
}

function startPipelines(env: TestEnv, workers = 1): Promise<INestApplicationContext> {
  return startService((config) => PipelinesModule.register(config, { workers }), env.config);
}

/** Pipelines and search in this process against a fresh TestEnv, with helpers to feed and query them. */
export class SearchHarness {
  private constructor(
    readonly env: TestEnv,
    readonly bus: Bus,
    readonly publisher: EventPublisher,
    readonly blobs: BlobStore,
    readonly searchApp: INestApplicationContext,
    private pipelines: INestApplicationContext | undefined,
  ) {}

  /** `withoutPipelines`: search only, until `startPipelines` (a log written before pipelines runs). */
  static async start(
    options: { workers?: number; env?: TestEnv; withoutPipelines?: boolean } = {},
  ): Promise<SearchHarness> {
    const env = options.env ?? (await createTestEnv());
    const pipelines = options.withoutPipelines ? undefined : await startPipelines(env, options.workers);
    const search = await startService((config) => SearchModule.register(config), env.config);
    const bus = await Bus.connect(env.config.natsUrl, 'search-test');
    return new SearchHarness(env, bus, new EventPublisher(bus), new BlobStore(env.config.blobsDir), search, pipelines);
  }

  /** Starts the pipelines service (again, after `stopPipelines`). */
  async startPipelines(workers?: number): Promise<void> {
    this.pipelines ??= await startPipelines(this.env, workers);
  }

  async stopPipelines(): Promise<void> {
    await this.pipelines?.close();
    this.pipelines = undefined;
  }

  /** Publishes an item.ingested as the ingest service does: the text in a blob first. */
  async ingest(item: TestItem): Promise<string> {
    const [id] = await this.ingestPrepared([{ item, sha: await this.blobs.put(Buffer.from(item.text)) }]);
    return id!;
  }

  /** item.ingested events for items whose text is already in the blob store under `sha`, in one pipelined batch. */
  async ingestPrepared(batch: Array<{ item: TestItem; sha: string }>): Promise<string[]> {
    const drafts = batch.map(({ item, sha }) => {
      const id = newId();
      const kind = item.kind ?? 'document';
      const size = Buffer.byteLength(item.text);
      return {
        type: 'item.ingested',
        subject: `item:${id}`,
        actor: { kind: 'import' as const, id: 'test' },
        kind,
        labels: item.labels ?? [],
        ...(item.spam ? { spam: true } : {}),
        ...(item.occurred_at ? { occurred_at: item.occurred_at } : {}),
        data: {
          id,
          kind,
          revision: 1,
          title: item.title,
          source: item.source ?? { kind: 'test', id: 'fixtures' },
          external_id: null,
          identity: `sha256:${sha}`,
          origin: 'imported',
          content_type: 'text/plain',
          content_sha256: sha,
          size,
          text_sha256: sha,
          text_length: item.text.length,
          // As the kind's handler writes it (an email its own thread, unread), with the test's fields over it.
          meta: {
            ...itemMeta(kind, {}, size).meta,
            ...(kind === 'email'
              ? { threadKey: id, spam: item.spam ?? false, flags: { read: false, starred: false } }
              : {}),
            ...item.meta,
          },
        },
      };
    });
    await this.publisher.publishAll(drafts.map((draft) => bindDraft(draft)));
    return drafts.map((draft) => draft.data.id);
  }

  async note(title: string, body: string, labels: string[] = []): Promise<string> {
    const id = newId();
    await this.publisher.publish(NotePut, {
      subject: `item:${id}`,
      actor: { kind: 'user', id: 'owner' },
      kind: 'note',
      labels,
      data: { id, title, body, markdown: noteMarkdownOf(body) },
    });
    return id;
  }

  async delete(id: string): Promise<void> {
    await this.publisher.publish(ItemDeleted, {
      subject: `item:${id}`,
      actor: { kind: 'user', id: 'owner' },
      data: { id },
    });
  }

  /** Waits until every event has been scheduled, every job done, and the search projector has applied the log. */
  async settle(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const projector = this.searchApp.get(ServiceHost).projector!;
    let quiet = 0;
    let state = '';
    while (quiet < 2) {
      if (Date.now() > deadline) throw new Error(`pipelines and search did not settle in time: ${state}`);
      const scheduler = await this.bus.jsm.consumers.info(EVENTS_STREAM, 'pipelines_scheduler');
      let busy = scheduler.num_pending + scheduler.num_ack_pending;
      for await (const consumer of this.bus.jsm.consumers.list(JOBS_STREAM))
        busy += consumer.num_pending + consumer.num_ack_pending;
      // Its lag, not its checkpoint: a projector whose consumer filters by type never sees the
      // log's last event when that is of another type (NATS 2.10 filters by every type it reads).
      const lag = await projector.lag();
      quiet = busy === 0 && lag === 0 ? quiet + 1 : 0;
      state = `${busy} events or jobs pending, the search projector ${lag} events behind`;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Calls a method of the services as the gateway would, with a scope. */
  call<M extends MethodDefinition>(method: M, params: ParamsOf<M>, scope: Scope = OWNER_SCOPE): Promise<ResultOf<M>> {
    return callMethod(this.bus, method, params, { scope, timeoutMs: 30_000 });
  }

  async stop(): Promise<void> {
    await this.searchApp.close();
    await this.stopPipelines();
    await this.bus.close();
    await this.env.stop();
  }
}

/** How the projector turns text into rows, for a bench that bulk-loads the read model as it would build it. */
export { partTsv, titleTsv } from './domain/text.js';
export { countWords } from './projection/vocabulary.js';
export { createAnnIndex, PROBES, shardOf, shardsOf, withSpaceLock } from './projection/vectors.js';
