import type { INestApplicationContext } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { OWNER_SCOPE, type MethodDefinition, type ParamsOf, type ResultOf } from '@memex/contracts';
import { Bus, callMethod, callRpc } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { createDatabase } from '@memex/db';
import { IngestModule } from '@memex/ingest';
import { MediaModule } from '@memex/media';
import { ServiceHost, startService, type ServiceHealth } from '@memex/runtime';
import { createTestEnv, type TestEnv } from '@memex/testing';
import { SourcesModule } from '../sources.module.js';

/** What a test reads of ingest's items (through its schema, as a check from outside). */
export interface IngestedItem {
  id: string;
  text: string;
  revision: number;
  location: string | null;
  unreachable_since: Date | null;
}

/** Ingest and sources in this process on a fresh TestEnv; the sources service can be restarted. */
export interface SourcesHarness {
  env: TestEnv;
  bus: Bus;
  call<M extends MethodDefinition>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>>;
  /** What the sources service's health reports wrong (what /healthz shows). */
  healthProblems(): Promise<string[]>;
  /** The items of a source (of a kind: `import:folder` unless said), from ingest's read model. */
  items(sourceId: string, kind?: string): Promise<IngestedItem[]>;
  /** Every row of the sources read model, in a stable order. */
  sourcesRows(): Promise<unknown[]>;
  /** Rebuilds the sources read model from the log (memex replay sources). */
  replaySources(): Promise<void>;
  startSources(): Promise<void>;
  stopSources(): Promise<void>;
  stop(): Promise<void>;
}

/** `media`: run the media service too (thumbnails made from in-place files); `config`: settings other than the tests'. */
export async function startSourcesHarness({
  media = false,
  config = {},
}: { media?: boolean; config?: Partial<MemexConfig> } = {}): Promise<SourcesHarness> {
  const env = await createTestEnv(config);
  const ingest = await startService((config) => IngestModule.register(config), env.config);
  const photos = media ? await startService((config) => MediaModule.register(config), env.config) : null;
  let sources: INestApplicationContext | null = await startService(
    (config) => SourcesModule.register(config),
    env.config,
  );
  const bus = await Bus.connect(env.config.natsUrl, 'sources-test');
  const db: Kysely<Record<string, never>> = createDatabase(env.config.databaseUrl, { schema: 'ingest' });
  return {
    env,
    bus,
    call: (method, params) => callMethod(bus, method, params, { scope: OWNER_SCOPE, timeoutMs: 120_000 }),
    async healthProblems() {
      const health = await callRpc<ServiceHealth>(
        bus,
        'memex.rpc.sources.health',
        { method: 'health', params: {}, scope: OWNER_SCOPE, caller: { kind: 'system', id: 'test' } },
        5000,
      );
      return health.problems ?? [];
    },
    async items(sourceId, kind = 'import:folder') {
      const { rows } = await sql<IngestedItem>`
        select id, text, revision, location, unreachable_since from items
        where source_kind = ${kind} and source_id = ${sourceId} order by id`.execute(db);
      return rows;
    },
    async sourcesRows() {
      const sources = await sql`select * from sources.sources order by id`.execute(db);
      const files = await sql`select * from sources.files order by source_id, path`.execute(db);
      return [...sources.rows, ...files.rows];
    },
    async replaySources() {
      await sources!.get(ServiceHost).projector!.rebuild(env.config.databaseUrl);
    },
    async startSources() {
      sources ??= await startService((config) => SourcesModule.register(config), env.config);
    },
    async stopSources() {
      await sources?.close();
      sources = null;
    },
    async stop() {
      await db.destroy();
      await bus.close();
      await sources?.close();
      await photos?.close();
      await ingest.close();
      await env.stop();
    },
  };
}
