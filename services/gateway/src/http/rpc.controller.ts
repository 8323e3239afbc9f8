import { Controller, Get, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { apiCatalog, buildOpenApi, MemexError } from '@memex/contracts';
import { Sessions } from '../web/sessions.js';
import { Dispatcher } from '../dispatcher.js';
import { toErrorBody } from './errors.js';

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

@Controller()
export class RpcController {
  constructor(
    @Inject(Sessions) private readonly sessions: Sessions,
    @Inject(Dispatcher) private readonly dispatcher: Dispatcher,
  ) {}

  /** `{"method", "params"}` → `{"result"}` or `{"error": {"code", "message"}}`. */
  @Post('api/v1/memex/rpc')
  async rpc(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const body = request.body as { method?: unknown; params?: unknown } | undefined;
    await this.answer(request, reply, () => {
      requireJson(request);
      if (!body || typeof body.method !== 'string') {
        throw new MemexError('invalid_params', 'body must be {"method": "memex.…", "params": {…}}');
      }
      return { method: body.method, params: body.params ?? {} };
    });
  }

  /** The same call with the method in the path and the params as the body. */
  @Post('api/v1/memex/:method')
  async method(
    @Param('method') method: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await this.answer(request, reply, () => {
      requireJson(request);
      return { method: `memex.${method}`, params: request.body ?? {} };
    });
  }

  @Get('api/v1/openapi.json')
  openapi(): Record<string, unknown> {
    return openApi;
  }

  private async answer(
    request: FastifyRequest,
    reply: FastifyReply,
    parse: () => { method: string; params: unknown },
  ): Promise<void> {
    try {
      const principal = await this.sessions.authenticate(request);
      const { method, params } = parse();
      const result = await this.dispatcher.call(method, params, principal);
      await reply.code(200).send({ result });
    } catch (error) {
      const { status, body } = toErrorBody(error);
      await reply.code(status).send(body);
    }
  }
}
