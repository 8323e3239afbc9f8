import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { MemexError } from '@memex/contracts';
import { toErrorBody } from './errors.js';

/** Request bodies up to 40 MB (the ingest limit), with base64 and JSON overhead on top. */
export const BODY_LIMIT = 56 * 1024 * 1024;
/** What a 503 tells a client to wait before sending again. */
const RETRY_AFTER_SECONDS = 2;

/**
 * Errors raised before a handler runs (body too large, unreadable JSON, unknown routes) answer
 * in the API's own `{"error": {"code", "message"}}` form too.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const error = exception as Error & { statusCode?: number; status?: number; getStatus?: () => number };
    const status = error.getStatus?.() ?? error.statusCode ?? error.status;
    const memex =
      exception instanceof MemexError
        ? exception
        : status === 413
          ? new MemexError('too_large', `request body is larger than ${BODY_LIMIT / 1024 / 1024} MB`)
          : status === 404
            ? new MemexError('not_found', 'no such route (see GET /api/v1/openapi.json)')
            : status !== undefined && status >= 400 && status < 500
              ? new MemexError('invalid_params', `unreadable request: ${error.message}`)
              : exception;
    const { status: code, body } = toErrorBody(memex);
    // `unavailable` passes (a service restarting, ingest busy): say when to ask again.
    if (code === 503) void reply.header('retry-after', String(RETRY_AFTER_SECONDS));
    void reply.code(code).send(body);
  }
}
