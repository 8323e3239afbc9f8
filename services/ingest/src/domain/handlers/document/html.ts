import { parseHTML } from 'linkedom';
import { Readability, isProbablyReaderable } from '@mozilla/readability';
import { writtenDate } from '../dates.js';
import type { HtmlFields } from '../handler.js';
import { collapseWhitespace, decodeText, htmlToPlainText, isValidUtf8, sniffHtmlCharset } from '../text.js';
import type { FormatResult } from './format.js';

/** Elements that are page furniture, not content: dropped when Readability finds no article. */
// Not <form>: ASP.NET pages wrap their whole body in one.
const FURNITURE = 'script, style, noscript, template, nav, header, footer, aside, iframe, svg';

function resolveUrl(href: string | null | undefined, base: string | null): string | null {
  if (!href?.trim()) return null;
  try {
    return new URL(href.trim(), base ?? undefined).toString();
  } catch {
    return null;
  }
}

/**
 * The page rebuilt as `<html><head>…</head><body>…</body></html>`. linkedom does not do HTML5 tree
 * construction: a bare fragment's first element becomes the root, and anything between </head> and
 * <body> (a stray <style>) makes it start a second, empty body. Real pages do both.
 */
function wellFormedDocument(text: string): string {
  // Tags are rebuilt, not copied: an unclosed quote in <html lang="en> leaves linkedom no root.
  const lang = /<html[^>]*?\blang\s*=\s*["']?([A-Za-z0-9-]+)/i.exec(text)?.[1];
  const strip = (s: string) => s.replace(/<!doctype[^>]*>|<\/?html[^>]*>|<\/?head[^>]*>|<\/?body[^>]*>/gi, '');
  const bodyTag = /<body[^>]*>/i.exec(text);
  const headEnd = /<\/head\s*>/i.exec(text);
  const split = bodyTag?.index ?? (headEnd ? headEnd.index + headEnd[0].length : 0);
  const head = strip(text.slice(0, split));
  const body = strip(text.slice(split));
  return `<!doctype html><html${lang ? ` lang="${lang}"` : ''}><head>${head}</head><body>${body}</body></html>`;
}

/**
 * A title as text: <title> is raw text in HTML, so markup injected into it (`<script>…</script>`
 * from a CMS or an attack page) comes out literally; scripts go whole, other tags are dropped.
 */
function plainTitle(title: string): string {
  return collapseWhitespace(title.replace(/<script\b[^]*?(<\/script\s*>|$)/gi, ' ').replace(/<\/?[a-z][^>]*>/gi, ' '));
}

/**
 * A web page or HTML document: decoded (BOM, then the declared charset, then <meta charset>, then
 * UTF-8 or windows-1252), its main content found by Readability (not navigation, ads or footers),
 * with the title, canonical URL, byline, site name, language and publication date when present.
 */
export function parseHtml(bytes: Buffer, declaredCharset: string | null, url: string | null): FormatResult<HtmlFields> {
  const meta = declaredCharset ? null : sniffHtmlCharset(bytes);
  // A page saved or converted to UTF-8 keeps its old <meta charset> (gb2312, iso-8859-1…): bytes
  // that are valid UTF-8 with non-ASCII in them are UTF-8 whatever the meta says (another
  // multibyte charset is valid UTF-8 by accident only in a few bytes).
  const metaLies =
    meta !== null && !/^utf-?8$/i.test(meta) && /[\x80-\xff]/.test(bytes.toString('latin1')) && isValidUtf8(bytes);
  const decoded = decodeText(bytes, declaredCharset ?? (metaLies ? 'utf-8' : meta));
  const { charset } = decoded;
  const html = wellFormedDocument(decoded.text);
  const { document } = parseHTML(html);
  // Read what Readability would strip before it mutates the document.
  const canonicalUrl = resolveUrl(document.querySelector('link[rel~="canonical"]')?.getAttribute('href'), url);
  const pageTitle = collapseWhitespace(document.querySelector('title')?.textContent ?? '') || null;
  const lang = document.documentElement?.getAttribute('lang') || null;
  const dom = document as unknown as Parameters<typeof isProbablyReaderable>[0];
  let article: ReturnType<Readability['parse']> = null;
  try {
    // Readability always returns its best guess; on a page that is not an article (a menu and a
    // heading) that guess includes the navigation, so it is only asked when the page reads as one.
    if (isProbablyReaderable(dom)) article = new Readability(dom, { charThreshold: 200 }).parse();
  } catch {
    // Readability throws on some degenerate documents (no body); the fallback below covers them.
  }
  const readable = Boolean(article?.content && article.textContent?.trim());
  let text: string;
  if (readable && article) {
    text = htmlToPlainText(article.content ?? '');
  } else {
    const { document: fallback } = parseHTML(html);
    for (const element of [...fallback.querySelectorAll(FURNITURE)]) element.remove();
    text = htmlToPlainText(fallback.body?.innerHTML ?? fallback.documentElement?.innerHTML ?? '');
  }
  return {
    title: plainTitle(article?.title ?? '') || plainTitle(pageTitle ?? '') || null,
    text,
    occurredAt: writtenDate(article?.publishedTime),
    fields: {
      format: 'html',
      charset,
      canonicalUrl,
      byline: collapseWhitespace(article?.byline ?? '') || null,
      siteName: collapseWhitespace(article?.siteName ?? '') || null,
      lang: lang ?? (article?.lang || null),
      readable,
    },
    warnings: metaLies ? [`its <meta> says ${meta} but the bytes are UTF-8: read as UTF-8`] : [],
  };
}
