import { collapseWhitespace } from '../text.js';

/** XML read as text by pattern (the parts of zipped office files), for what needs no parser. */

export function firstElement(xml: string, name: string): string | undefined {
  return new RegExp(`<${name}\\b[^>]*>([\\s\\S]*?)</${name}>`).exec(xml)?.[1];
}

const textOf = (xml: string) => decodeEntities(xml.replace(/<[^>]+>/g, ''));

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : Number(name.slice(1));
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name] ?? whole;
  });
}

/**
 * A document's own title and creation time from its properties (OOXML's docProps/core.xml,
 * OpenDocument's meta.xml, an e-book's package document): null where it states none (or a date
 * that does not parse).
 */
export function documentProperties(xml: string | undefined): { title: string | null; created: string | null } {
  if (!xml) return { title: null, created: null };
  const title = collapseWhitespace(textOf(firstElement(xml, 'dc:title') ?? '')) || null;
  const date = (
    firstElement(xml, 'dcterms:created') ??
    firstElement(xml, 'meta:creation-date') ??
    firstElement(xml, 'dc:date')
  )?.trim();
  return { title, created: date && !Number.isNaN(Date.parse(date)) ? new Date(date).toISOString() : null };
}
