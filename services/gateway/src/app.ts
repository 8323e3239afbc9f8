import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { MemexConfig } from '@memex/config';
import { GatewayModule } from './gateway.module.js';
import { toErrorBody } from './http/errors.js';
import { MemexError } from '@memex/contracts';

/** Request bodies up to 40 MB (the ingest limit), with base64 and JSON overhead on top. */
export const BODY_LIMIT = 56 * 1024 * 1024;

/** Builds and starts the gateway; returns the app (tests read its port from `app.getUrl()`). */
export async function startGateway(config: MemexConfig): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({ bodyLimit: BODY_LIMIT });
  adapter.getInstance().setErrorHandler((error: Error & { statusCode?: number; code?: string }, _request, reply) => {
    const memex =
      error.statusCode === 413
        ? new MemexError('too_large', `request body is larger than ${BODY_LIMIT / 1024 / 1024} MB`)
        : error.statusCode === 400 || error.statusCode === 415
          ? new MemexError('invalid_params', `unreadable request: ${error.message}`)
          : error;
    const { status, body } = toErrorBody(memex);
    void reply.code(status).send(body);
  });
  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.register(config), adapter, {
    logger: ['log', 'warn', 'error'],
    abortOnError: false,
  });
  app.enableShutdownHooks();
  await app.listen(config.port, config.host);
  return app;
}
