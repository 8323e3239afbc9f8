import { Controller, Get, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { apiCatalog, buildOpenApi, MemexError } from '@memex/contracts';
import { AuthService } from '../auth/auth.service.js';
import { Dispatcher } from '../dispatcher.js';
import { toErrorBody } from './errors.js';

const openApi = buildOpenApi(apiCatalog, '0.1.0');

@Controller()
export class RpcController {
  constructor(
    @Inject(AuthService) private readonly auth: AuthService,
    @Inject(Dispatcher) private readonly dispatcher: Dispatcher,
  ) {}

  /** `{"method", "params"}` → `{"result"}` or `{"error": {"code", "message"}}`. */
  @Post('api/v1/memex/rpc')
  async rpc(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const body = request.body as { method?: unknown; params?: unknown } | undefined;
    await this.answer(request, reply, () => {
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
    await this.answer(request, reply, () => ({ method: `memex.${method}`, params: request.body ?? {} }));
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
      const principal = await this.auth.authenticate(request.headers.authorization);
      const { method, params } = parse();
      const result = await this.dispatcher.call(method, params, principal);
      await reply.code(200).send({ result });
    } catch (error) {
      const { status, body } = toErrorBody(error);
      await reply.code(status).send(body);
    }
  }
}
