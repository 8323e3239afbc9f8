import { Readable } from 'node:stream';
import { Controller, Get, Inject, Param, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CONTENT_CHUNK_BYTES, ItemsContent, MemexError, type ResultOf } from '@memex/contracts';
import { Dispatcher } from '../dispatcher.js';
import { toErrorBody } from '../http/errors.js';
import { Sessions } from './sessions.js';

type Content = ResultOf<typeof ItemsContent>;

/** What the browser may show in place; anything else is a download, never a page of this origin. */
const INLINE = /^(video|audio)\//;

/** `bytes=a-b`, `bytes=a-` or `bytes=-n` (the last n bytes); several ranges are not served. */
export function parseRange(header: string | undefined): { start: number; end?: number } | { suffix: number } | null {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) {
    throw new MemexError('invalid_params', `unreadable Range ${JSON.stringify(header)}: send bytes=<start>-[<end>]`);
  }
  if (match[1] === '') return { suffix: Number(match[2]) };
  const start = Number(match[1]);
  const end = match[2] === '' ? undefined : Number(match[2]);
  if (end !== undefined && end < start) throw new MemexError('invalid_params', `Range ${header} ends before it starts`);
  return { start, ...(end === undefined ? {} : { end }) };
}

/**
 * An item's original bytes over plain HTTP, for the browser's own players: `<video src>` streams
 * a video with Range requests (so seeking fetches only what it needs) on the session cookie,
 * within the session's scope — the same memex.items.content the API answers, range by range.
 * A GET changes nothing, so it needs no CSRF header; the bytes carry a sandboxing policy and are
 * shown in place only when they are video or audio.
 */
@Controller('api/v1/content')
export class ContentController {
  constructor(
    @Inject(Sessions) private readonly sessions: Sessions,
    @Inject(Dispatcher) private readonly dispatcher: Dispatcher,
  ) {}

  @Get(':id')
  async content(@Param('id') id: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    try {
      const principal = await this.sessions.authenticate(request);
      const read = (offset: number, length = CONTENT_CHUNK_BYTES) =>
        this.dispatcher.call(ItemsContent.name, { id, offset, length }, principal) as Promise<Content>;
      const range = parseRange(request.headers.range);
      let first: Content;
      let start = 0;
      if (range && 'suffix' in range) {
        const { size } = await read(0, 1);
        start = Math.max(0, size - range.suffix);
        first = await read(start, Math.min(CONTENT_CHUNK_BYTES, size - start) || 1);
      } else {
        start = range?.start ?? 0;
        const wanted = range?.end === undefined ? CONTENT_CHUNK_BYTES : range.end - start + 1;
        first = await read(start, Math.min(CONTENT_CHUNK_BYTES, wanted));
      }
      this.headers(reply, first);
      if (range) {
        if (start >= first.size)
          return void (await reply.code(416).header('content-range', `bytes */${first.size}`).send());
        // One chunk at most per answer: the browser asks again from where it ends.
        const bytes = Buffer.from(first.data, 'base64');
        return void (await reply
          .code(206)
          .header('content-range', `bytes ${start}-${start + bytes.length - 1}/${first.size}`)
          .header('content-length', bytes.length)
          .send(bytes));
      }
      await reply.header('content-length', first.size).send(Readable.from(this.chunks(first, read)));
    } catch (error) {
      const { status, body } = toErrorBody(error);
      await reply.code(status).send(body);
    }
  }

  private headers(reply: FastifyReply, content: Content): void {
    const inline = INLINE.test(content.content_type);
    const name = content.filename ?? content.id;
    void reply
      .header('content-type', content.content_type)
      .header('accept-ranges', 'bytes')
      .header('cache-control', 'private, no-cache')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'; sandbox")
      .header(
        'content-disposition',
        `${inline ? 'inline' : 'attachment'}; filename*=UTF-8''${encodeURIComponent(name)}`,
      );
  }

  /** The whole item, chunk after chunk, each read only when the client has taken the last. */
  private async *chunks(first: Content, read: (offset: number) => Promise<Content>): AsyncGenerator<Buffer> {
    let range = first;
    yield Buffer.from(range.data, 'base64');
    while (range.next_offset !== null) {
      range = await read(range.next_offset);
      yield Buffer.from(range.data, 'base64');
    }
  }
}
