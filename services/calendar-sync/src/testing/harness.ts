import type { INestApplicationContext } from '@nestjs/common';
import { OWNER_SCOPE, type MethodDefinition, type ParamsOf, type ResultOf, type Scope } from '@memex/contracts';
import { Bus, callMethod } from '@memex/bus';
import { GraphModule } from '@memex/graph';
import { IngestModule } from '@memex/ingest';
import { startService } from '@memex/runtime';
import { createTestEnv, type TestEnv } from '@memex/testing';
import { CalendarSyncModule } from '../calendar-sync.module.js';

/** Ingest, graph and calendar-sync in this process on a fresh TestEnv, called over NATS as the gateway would. */
export interface CalendarHarness {
  env: TestEnv;
  bus: Bus;
  ingest: INestApplicationContext;
  graph: INestApplicationContext;
  calendar: INestApplicationContext;
  call<M extends MethodDefinition>(method: M, params: ParamsOf<M>, scope?: Scope): Promise<ResultOf<M>>;
  stop(): Promise<void>;
}

export async function startCalendar(): Promise<CalendarHarness> {
  const env = await createTestEnv();
  const ingest = await startService((config) => IngestModule.register(config), env.config);
  const graph = await startService((config) => GraphModule.register(config), env.config);
  const calendar = await startService((config) => CalendarSyncModule.register(config), env.config);
  const bus = await Bus.connect(env.config.natsUrl, 'calendar-test');
  return {
    env,
    bus,
    ingest,
    graph,
    calendar,
    call: (method, params, scope = OWNER_SCOPE) => callMethod(bus, method, params, { scope }),
    async stop() {
      await bus.close();
      await calendar.close();
      await graph.close();
      await ingest.close();
      await env.stop();
    },
  };
}
