import type { INestApplicationContext } from '@nestjs/common';
import { OWNER_SCOPE, type MethodDefinition, type ParamsOf, type ResultOf, type Scope } from '@memex/contracts';
import { Bus, callMethod } from '@memex/bus';
import { startService } from '@memex/runtime';
import { createTestEnv, type TestEnv } from '@memex/testing';
import { IngestModule } from '../ingest.module.js';

/** The ingest service in this process against a fresh TestEnv, called over NATS as the gateway would. */
export interface IngestHarness {
  env: TestEnv;
  bus: Bus;
  app: INestApplicationContext;
  call<M extends MethodDefinition>(method: M, params: ParamsOf<M>, scope?: Scope): Promise<ResultOf<M>>;
  stop(): Promise<void>;
}

export async function startIngest(): Promise<IngestHarness> {
  const env = await createTestEnv();
  const app = await startService((config) => IngestModule.register(config), env.config);
  const bus = await Bus.connect(env.config.natsUrl, 'ingest-test');
  return {
    env,
    bus,
    app,
    call: (method, params, scope = OWNER_SCOPE) => callMethod(bus, method, params, { scope }),
    async stop() {
      await bus.close();
      await app.close();
      await env.stop();
    },
  };
}

/** base64 of a string or bytes. */
export function b64(data: string | Buffer): string {
  return (typeof data === 'string' ? Buffer.from(data, 'utf8') : data).toString('base64');
}
