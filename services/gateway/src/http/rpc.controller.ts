import { Controller, Get, HttpCode, Inject, Param, Post, Req, UseGuards } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { apiCatalog, buildOpenApi, MemexError } from '@memex/contracts';
import type { Principal } from '@memex/runtime';
import { Dispatcher } from '../dispatcher.js';
import { AuthGuard, Caller } from './auth.guard.js';

const openApi = buildOpenApi(apiCatalog, '0.1.0');

/**
 * Calls are JSON. A body in another type (`curl -d` sends a form) would otherwise reach the
 * method as a form's fields and fail with an error about them: say what to send instead.
 */
function requireJson(request: FastifyRequest): void {
  const type = request.headers['content-type'];
  if (request.body !== undefined && !/^application\/json\b/i.test(type ?? '')) {
    throw new MemexError(
      'invalid_params',
      `send the body as JSON with the header Content-Type: application/json (this request's is ${type ?? 'missing'}; curl -d needs -H 'Content-Type: application/json')`,
    );
  }
}

/** Every call is authenticated by AuthGuard; errors answer through the global ApiExceptionFilter. */
@Controller()
export class RpcController {
  constructor(@Inject(Dispatcher) private readonly dispatcher: Dispatcher) {}

  /** `{"method", "params"}` → `{"result"}` or `{"error": {"code", "message"}}`. */
  @Post('api/v1/memex/rpc')
  @HttpCode(200)
  @UseGuards(AuthGuard)
  async rpc(@Req() request: FastifyRequest, @Caller() principal: Principal): Promise<{ result: unknown }> {
    requireJson(request);
    const body = request.body as { method?: unknown; params?: unknown } | undefined;
    if (!body || typeof body.method !== 'string') {
      throw new MemexError('invalid_params', 'body must be {"method": "memex.…", "params": {…}}');
    }
    return { result: await this.dispatcher.call(body.method, body.params ?? {}, principal) };
  }

  /** The same call with the method in the path and the params as the body. */
  @Post('api/v1/memex/:method')
  @HttpCode(200)
  @UseGuards(AuthGuard)
  async method(
    @Param('method') method: string,
    @Req() request: FastifyRequest,
    @Caller() principal: Principal,
  ): Promise<{ result: unknown }> {
    requireJson(request);
    return { result: await this.dispatcher.call(`memex.${method}`, request.body ?? {}, principal) };
  }

  @Get('api/v1/openapi.json')
  openapi(): Record<string, unknown> {
    return openApi;
  }
}
