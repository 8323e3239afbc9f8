import { createParamDecorator, Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Principal } from '@memex/runtime';
import { Sessions } from '../web/sessions.js';

type Authenticated = FastifyRequest & { principal?: Principal };

/**
 * Who is calling, decided once before the handler: a token (Authorization: Bearer) or the web
 * session's cookie. A refusal throws `unauthorized`, which the API's exception filter answers.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(@Inject(Sessions) private readonly sessions: Sessions) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Authenticated>();
    request.principal = await this.sessions.authenticate(request);
    return true;
  }
}

/** The principal AuthGuard found, as a handler parameter. */
export const Caller = createParamDecorator((_: unknown, context: ExecutionContext): Principal => {
  const principal = context.switchToHttp().getRequest<Authenticated>().principal;
  if (!principal) throw new Error('@Caller() needs @UseGuards(AuthGuard)');
  return principal;
});
