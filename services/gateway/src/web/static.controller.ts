import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { Controller, Get, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { toErrorBody } from '../http/errors.js';
import { MemexError } from '@memex/contracts';

/** `web/dist` beside this package in the checkout: what `npm run build` makes of `web/`. */
export const WEB_DIST = fileURLToPath(new URL('../../../../web/dist/', import.meta.url));

/**
 * The page's policy: scripts, fonts and API calls only from here; no plugins, no framing, no
 * <base>. Two allowances exist for mail, which is shown in a sandboxed srcdoc iframe that
 * inherits this policy: inline styles (mail lays itself out with them) and images from the
 * web (only once the reader allows a sender's remote images; the mail frame carries its own
 * stricter policy that blocks them until then, and scripts never run there).
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob: https: http:",
  // Videos and recordings play from the gateway's own content route, never from elsewhere.
  "media-src 'self'",
  "connect-src 'self'",
  "frame-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.woff2': 'font/woff2',
};

/** Hashed build outputs never change under their name: compressed once, kept. */
const compressed = new Map<string, Buffer>();

/**
 * The web UI's static files. `/assets/*` carry content hashes in their names and are cached for
 * a year; every other path (the app's own routes: /search, /thing/…) answers index.html, which
 * is never cached, so a new build is picked up on the next load.
 */
@Controller()
export class StaticController {
  @Get('*')
  async serve(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    // Fastify has already refused a malformed escape (400), so this decodes.
    const url = decodeURIComponent(request.url.split('?')[0]!);
    if (url.startsWith('/api/')) {
      const { status, body } = toErrorBody(
        new MemexError('not_found', `no such route ${url} (see GET /api/v1/openapi.json)`),
      );
      return void (await reply.code(status).send(body));
    }
    const hashed = url.startsWith('/assets/');
    const asset = hashed || /^\/[\w.-]+\.(svg|png|ico|webmanifest)$/.test(url);
    const file = asset ? path.join(WEB_DIST, path.normalize(url)) : path.join(WEB_DIST, 'index.html');
    if (!file.startsWith(WEB_DIST)) return void (await reply.code(404).send());
    let bytes: Buffer;
    try {
      bytes = await readFile(file);
    } catch {
      if (asset) return void (await reply.code(404).type('text/plain').send(`no such file ${url}`));
      return void (await reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send(`The web UI is not built (no ${file}): run \`npm run build\`.`));
    }
    const type = TYPES[path.extname(file)] ?? 'application/octet-stream';
    void reply
      .header('content-type', type)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header(
        'cache-control',
        hashed ? 'public, max-age=31536000, immutable' : asset ? 'public, max-age=3600' : 'no-cache',
      );
    if (!asset) void reply.header('content-security-policy', CONTENT_SECURITY_POLICY).header('x-frame-options', 'DENY');
    const gzip =
      /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? '')) && /text|javascript|svg|json/.test(type);
    if (!gzip) return void (await reply.send(bytes));
    let body = hashed ? compressed.get(file) : undefined;
    if (!body) {
      body = gzipSync(bytes);
      if (hashed) compressed.set(file, body);
    }
    await reply.header('content-encoding', 'gzip').header('vary', 'accept-encoding').send(body);
  }
}
