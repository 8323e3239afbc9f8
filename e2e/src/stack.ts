import type { INestApplicationContext } from '@nestjs/common';
import { MemexClient } from '@memex/client';
import { startService, type ServiceModuleFactory } from '@memex/runtime';
import { createTestEnv, type TestEnv } from '@memex/testing';
import { ensureOwnerToken, startGateway } from '@memex/gateway';
import { IngestModule } from '@memex/ingest';
import { PipelinesModule } from '@memex/pipelines';
import { SearchModule } from '@memex/search';
import { GraphModule } from '@memex/graph';
import { InsightsModule } from '@memex/insights';
import { HeadModule } from '@memex/head';
import { MailSyncModule } from '@memex/mail-sync';
import { CalendarSyncModule } from '@memex/calendar-sync';
import { MediaModule } from '@memex/media';
import { SourcesModule } from '@memex/sources';
import type { MemexConfig } from '@memex/config';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';

export interface TestStack {
  env: TestEnv;
  config: MemexConfig;
  url: string;
  gateway: NestFastifyApplication;
  ownerToken: string;
  owner: MemexClient;
  clientFor(token: string): MemexClient;
  stop(): Promise<void>;
}

/** The services a test can ask for, by name, started in this process. */
export const SERVICE_MODULES: Record<string, ServiceModuleFactory> = {
  ingest: (config) => IngestModule.register(config),
  pipelines: (config) => PipelinesModule.register(config),
  search: (config) => SearchModule.register(config),
  graph: (config) => GraphModule.register(config),
  insights: (config) => InsightsModule.register(config),
  head: (config) => HeadModule.register(config),
  'mail-sync': (config) => MailSyncModule.register(config),
  'calendar-sync': (config) => CalendarSyncModule.register(config),
  media: (config) => MediaModule.register(config),
  sources: (config) => SourcesModule.register(config),
};

/** A gateway plus the named services against a fresh TestEnv, in this process. */
export async function startStack(services: string[] = ['ingest']): Promise<TestStack> {
  const env = await createTestEnv({ services: ['gateway', ...services] });
  const apps: INestApplicationContext[] = [];
  for (const name of services) apps.push(await startService(SERVICE_MODULES[name]!, env.config));
  const gateway = await startGateway(env.config);
  const address = gateway.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const url = `http://127.0.0.1:${port}`;
  const ownerToken = ensureOwnerToken(env.config.home);
  return {
    env,
    config: env.config,
    url,
    gateway,
    ownerToken,
    owner: new MemexClient({ url, token: ownerToken }),
    clientFor: (token) => new MemexClient({ url, token }),
    async stop() {
      await gateway.close();
      for (const app of apps.reverse()) await app.close();
      await env.stop();
    },
  };
}
