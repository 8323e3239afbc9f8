import { Controller, Get, Inject, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { MemexError, type Scope } from '@memex/contracts';
import { scopedFeed, type Bus } from '@memex/bus';
import { BUS } from '@memex/runtime';
import { Sessions } from '../web/sessions.js';
import { toErrorBody } from '../http/errors.js';

/** Where a subscriber resumes: `from_seq`, else one past the Last-Event-ID it saw, else the start. */
export function resumePoint(fromSeq: string | undefined, lastEventId: string | undefined): number {
  if (fromSeq !== undefined) {
    const seq = Number(fromSeq);
    if (!Number.isInteger(seq) || seq < 1)
      throw new MemexError('invalid_params', `from_seq must be a positive integer, got "${fromSeq}"`);
    return seq;
  }
  if (lastEventId !== undefined) {
    const seen = Number(lastEventId);
    if (!Number.isInteger(seen) || seen < 0)
      throw new MemexError('invalid_params', `Last-Event-ID must be a sequence, got "${lastEventId}"`);
    return seen + 1;
  }
  return 1;
}

/** The event stream for subscribers (the agent platform's head, UIs), as server-sent events. */
@Controller('api/v1/memex')
export class EventsController {
  constructor(
    @Inject(Sessions) private readonly sessions: Sessions,
    @Inject(BUS) private readonly bus: Bus,
  ) {}

  @Get('events')
  async subscribe(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Query('from_seq') fromSeq?: string,
    @Query('types') types?: string,
  ): Promise<void> {
    let scope: Scope;
    let start: number;
    try {
      scope = (await this.sessions.authenticate(request)).scope;
      start = resumePoint(fromSeq, request.headers['last-event-id'] as string | undefined);
    } catch (error) {
      const { status, body } = toErrorBody(error);
      return void (await reply.code(status).send(body));
    }
    const wanted = (types ?? '')
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
    const abort = new AbortController();
    reply.hijack();
    const out = reply.raw;
    out.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    out.write(': memex event stream\n\n');
    const heartbeat = setInterval(() => out.write(': keepalive\n\n'), 15_000);
    request.raw.on('close', () => abort.abort());
    try {
      for await (const { seq, event } of scopedFeed(this.bus, {
        scope,
        fromSeq: start,
        types: wanted,
        signal: abort.signal,
      })) {
        out.write(`id: ${seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
      }
    } catch (error) {
      if (!abort.signal.aborted) out.write(`event: error\ndata: ${JSON.stringify(toErrorBody(error).body)}\n\n`);
    } finally {
      clearInterval(heartbeat);
      out.end();
    }
  }
}
