import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { MemexConfig } from '@memex/config';
import { GatewayModule } from './gateway.module.js';
import { ApiExceptionFilter, BODY_LIMIT } from './http/api-exception.filter.js';

/** Builds and starts the gateway; returns the app (tests read its port from `app.getUrl()`). */
export async function startGateway(config: MemexConfig): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({ bodyLimit: BODY_LIMIT });
  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.register(config), adapter, {
    logger: ['log', 'warn', 'error'],
    abortOnError: false,
  });
  app.useGlobalFilters(new ApiExceptionFilter());
  app.enableShutdownHooks();
  await app.listen(config.port, config.host);
  return app;
}
