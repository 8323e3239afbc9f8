import { RejectedItem, type HtmlFields } from '../handler.js';
import { writtenDate } from '../dates.js';
import { headerValue, leadingJunkLength, partBytes, readMessage, walk } from '../mail/mime.js';
import type { FormatResult } from './format.js';
import { parseHtml } from './html.js';

/**
 * A web page saved as one file (MHTML: Chrome's "Webpage, single file", Internet Explorer's and
 * Word's .mht): a MIME message whose first HTML part is the page, its images and styles beside it.
 * Read as the page it holds, at the address it was saved from, dated when it was saved unless the
 * page gives its own date. (Not mail: it has no sender, though it has a From line.)
 */
export function parseMhtml(bytes: Buffer, url: string | null): FormatResult<HtmlFields> {
  const raw = bytes.toString('latin1');
  const message = raw.slice(leadingJunkLength(raw));
  const root = readMessage(message);
  const page = [...walk(root)].find((node) => node.contentType === 'text/html');
  if (!page) throw new RejectedItem('not a readable web archive (MHTML): it holds no HTML page');
  const location =
    headerValue(root.headers, 'snapshot-content-location') ?? headerValue(page.headers, 'content-location') ?? url;
  const result = parseHtml(partBytes(message, page), page.params.get('charset') ?? null, location?.trim() || null);
  return {
    ...result,
    occurredAt: result.occurredAt ?? writtenDate(headerValue(root.headers, 'date')),
    fields: { ...result.fields, canonicalUrl: result.fields.canonicalUrl ?? (location?.trim() || null) },
  };
}

/** Whether bytes are a saved web archive: MIME headers, a multipart/related body (Word's .mht saved as .doc). */
export function looksLikeMhtml(bytes: Buffer): boolean {
  const headers = bytes
    .subarray(0, 4096)
    .toString('latin1')
    .split(/\r?\n\r?\n/)[0]!;
  return /^MIME-Version:/im.test(headers) && /^Content-Type:\s*multipart\/related/im.test(headers);
}
