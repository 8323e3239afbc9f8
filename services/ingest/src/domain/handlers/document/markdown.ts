import { readMarkdown } from '@memex/markdown';
import { writtenDate } from '../dates.js';
import type { MarkdownFields } from '../handler.js';
import type { FormatResult } from './format.js';

/**
 * The front matter as searchable text: `key: value` per line, lists joined, nested mappings
 * flattened (`author.name: Ann`). Values are what a note says about itself (a project, a person,
 * a status): a search for them must find the note.
 */
function frontMatterText(front: Record<string, unknown> | null): string {
  const lines: string[] = [];
  const visit = (key: string, value: unknown): void => {
    if (value === null || value === undefined) return;
    if (value instanceof Date) lines.push(`${key}: ${value.toISOString().slice(0, 10)}`);
    else if (Array.isArray(value)) {
      const flat = value.flat(Infinity).filter((v) => typeof v !== 'object' || v instanceof Date);
      if (flat.length > 0)
        lines.push(
          `${key}: ${flat.map((v) => (v instanceof Date ? v.toISOString().slice(0, 10) : String(v))).join(', ')}`,
        );
      for (const v of value) if (v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date)) visit(key, v);
    } else if (typeof value === 'object') for (const [k, v] of Object.entries(value)) visit(`${key}.${k}`, v);
    else lines.push(`${key}: ${String(value)}`);
  };
  for (const [key, value] of Object.entries(front ?? {})) visit(key, value);
  return lines.join('\n');
}

function frontMatterDate(front: Record<string, unknown> | null): string | null {
  for (const key of ['date', 'created']) {
    const value = front?.[key];
    // YAML reads a timestamp into a Date itself (as UTC when it names no zone).
    if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString();
    const date = typeof value === 'string' ? writtenDate(value) : null;
    if (date) return date;
  }
  return null;
}

/**
 * Markdown (Obsidian-flavoured notes included): front matter kept as metadata and its values put
 * before the text as `key: value` lines (searchable), [[wiki links]] (in the front matter too)
 * and #tags extracted for linking later, headings listed; the text is otherwise the Markdown
 * source itself (already readable, and what a search should match).
 */
export function parseMarkdown(source: string): FormatResult<MarkdownFields> {
  const { frontMatter, frontMatterProblem, body, links, tags, headings } = readMarkdown(source);
  const title =
    typeof frontMatter?.['title'] === 'string' && frontMatter['title'].trim() ? frontMatter['title'].trim() : null;
  return {
    title: title ?? headings.find((h) => h.level === 1)?.text ?? null,
    text: [frontMatterText(frontMatter), body.trim()].filter(Boolean).join('\n\n'),
    occurredAt: frontMatterDate(frontMatter),
    fields: { format: 'markdown', frontMatter, links, tags, headings: headings.map((h) => h.text) },
    warnings: frontMatterProblem ? [frontMatterProblem] : [],
  };
}
