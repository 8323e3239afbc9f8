import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { DynamicModule, INestApplicationContext } from '@nestjs/common';
import { loadConfig, type MemexConfig } from '@memex/config';
import { startTracing } from '@memex/telemetry';

/** Builds a service's root module for a configuration. */
export type ServiceModuleFactory = (config: MemexConfig) => DynamicModule;

/** Starts a service in this process (tests start several side by side). */
export async function startService(
  factory: ServiceModuleFactory,
  config: MemexConfig,
): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(factory(config), {
    logger: config.logLevel === 'debug' ? ['log', 'debug', 'warn', 'error'] : ['log', 'warn', 'error'],
    abortOnError: false,
  });
  await app.init();
  return app;
}

/** A service's `main`: config from the environment, tracing, clean stop on SIGINT/SIGTERM. */
export async function runService(name: string, factory: ServiceModuleFactory): Promise<void> {
  const config = loadConfig();
  startTracing({ serviceName: `memex-${name}`, otlpEndpoint: config.otlpEndpoint });
  const app = await startService(factory, config);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await app.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}
