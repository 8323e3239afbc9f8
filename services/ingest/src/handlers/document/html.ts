import { parseHTML } from 'linkedom';
import { Readability } from '@mozilla/readability';
import type { HtmlFields } from '../handler.js';
import { collapseWhitespace, decodeText, htmlToPlainText, sniffHtmlCharset } from '../text.js';
import type { FormatResult } from './format.js';

/** Elements that are page furniture, not content: dropped when Readability finds no article. */
const FURNITURE = 'script, style, noscript, template, nav, header, footer, aside, form, iframe, svg';

function resolveUrl(href: string | null | undefined, base: string | null): string | null {
  if (!href?.trim()) return null;
  try {
    return new URL(href.trim(), base ?? undefined).toString();
  } catch {
    return null;
  }
}

function parsedDate(value: string | null | undefined): string | null {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/**
 * A web page or HTML document: decoded (BOM, then the declared charset, then <meta charset>, then
 * UTF-8 or windows-1252), its main content found by Readability (not navigation, ads or footers),
 * with the title, canonical URL, byline, site name, language and publication date when present.
 */
export function parseHtml(bytes: Buffer, declaredCharset: string | null, url: string | null): FormatResult<HtmlFields> {
  const decoded = decodeText(bytes, declaredCharset ?? sniffHtmlCharset(bytes));
  const { charset } = decoded;
  // linkedom makes the first element of a bare fragment the root; give fragments a document.
  const html = /<(html|body)[\s>]/i.test(decoded.text) ? decoded.text : `<!doctype html><html><head></head><body>${decoded.text}</body></html>`;
  const { document } = parseHTML(html);
  // Read what Readability would strip before it mutates the document.
  const canonicalUrl = resolveUrl(document.querySelector('link[rel~="canonical"]')?.getAttribute('href'), url);
  const pageTitle = collapseWhitespace(document.querySelector('title')?.textContent ?? '') || null;
  const lang = document.documentElement?.getAttribute('lang') || null;
  let article: ReturnType<Readability['parse']> = null;
  try {
    article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0], { charThreshold: 200 }).parse();
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
    title: collapseWhitespace(article?.title ?? '') || pageTitle,
    text,
    occurredAt: parsedDate(article?.publishedTime),
    fields: {
      format: 'html',
      charset,
      canonicalUrl,
      byline: collapseWhitespace(article?.byline ?? '') || null,
      siteName: collapseWhitespace(article?.siteName ?? '') || null,
      lang: lang ?? (article?.lang || null),
      readable,
    },
    warnings: [],
  };
}
