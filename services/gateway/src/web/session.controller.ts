import { Controller, Delete, Get, Inject, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { MemexError, type Scope } from '@memex/contracts';
import { toErrorBody } from '../http/errors.js';
import { Sessions, sessionSetCookie } from './sessions.js';

/** What the web UI learns about who signed in: enough to hide what the scope cannot reach. */
function describe(scope: Scope, csrf: string) {
  return scope.kind === 'owner'
    ? { kind: 'owner' as const, labels: [], kinds: [], csrf }
    : { kind: 'agent' as const, labels: scope.labels, kinds: scope.kinds, csrf };
}

/** Browser sign-in: a token in, an HttpOnly SameSite=Strict session cookie out. */
@Controller('api/v1/session')
export class SessionController {
  constructor(@Inject(Sessions) private readonly sessions: Sessions) {}

  @Post()
  async signIn(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    try {
      const token = (request.body as { token?: unknown } | undefined)?.token;
      if (typeof token !== 'string' || !token.trim()) {
        throw new MemexError('invalid_params', 'body must be {"token": "<owner or agent token>"}');
      }
      const { cookie, csrf, principal } = await this.sessions.open(token.trim());
      await reply
        .header('set-cookie', sessionSetCookie(cookie, request.protocol === 'https'))
        .send(describe(principal.scope, csrf));
    } catch (error) {
      const { status, body } = toErrorBody(error);
      await reply.code(status).send(body);
    }
  }

  /** Who this browser is signed in as (401 when it is not): how the UI resumes after a reload. */
  @Get()
  async current(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    try {
      const session = this.sessions.find(request);
      if (!session) throw new MemexError('unauthorized', 'not signed in');
      const principal = await this.sessions.authenticate(request);
      await reply.send(describe(principal.scope, session.csrf));
    } catch (error) {
      const { status, body } = toErrorBody(error);
      await reply.code(status).send(body);
    }
  }

  @Delete()
  async signOut(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    try {
      await this.sessions.authenticate(request); // the CSRF check: another site cannot sign you out
      this.sessions.close(request);
      await reply
        .header('set-cookie', sessionSetCookie(null, request.protocol === 'https'))
        .code(204)
        .send();
    } catch (error) {
      const { status, body } = toErrorBody(error);
      await reply.code(status).send(body);
    }
  }
}
