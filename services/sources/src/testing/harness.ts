import type { INestApplicationContext } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { OWNER_SCOPE, type MethodDefinition, type ParamsOf, type ResultOf } from '@memex/contracts';
import { Bus, callMethod } from '@memex/bus';
import { createDatabase } from '@memex/db';
import { IngestModule } from '@memex/ingest';
import { startService } from '@memex/runtime';
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
  /** The items of a source, from ingest's read model. */
  items(sourceId: string): Promise<IngestedItem[]>;
  startSources(): Promise<void>;
  stopSources(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSourcesHarness(): Promise<SourcesHarness> {
  const env = await createTestEnv();
  const ingest = await startService((config) => IngestModule.register(config), env.config);
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
    async items(sourceId) {
      const { rows } = await sql<IngestedItem>`
        select id, text, revision, location, unreachable_since from items
        where source_kind = 'import:folder' and source_id = ${sourceId} order by id`.execute(db);
      return rows;
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
      await ingest.close();
      await env.stop();
    },
  };
}
