import { parse as parseYaml } from 'yaml';
import type { MarkdownFields, WikiLink } from '../handler.js';
import { collapseWhitespace } from '../text.js';
import type { FormatResult } from './format.js';

const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;

/**
 * The text with code and comments blanked out (same length, same lines), so that links, tags and
 * headings are only found in prose: fenced blocks (``` and ~~~), inline code spans, HTML comments
 * and Obsidian %% comments. (Indented code blocks are not blanked: telling them from list
 * continuations needs a full parser.)
 */
export function maskCode(text: string): string {
  const blank = (s: string) => s.replace(/[^\n]/g, ' ');
  const lines = text.split('\n');
  let fence: { char: string; length: number } | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (open?.[1] && open[1][0] === fence.char && open[1].length >= fence.length && line.trim() === open[1])
        fence = null;
      lines[i] = blank(line);
    } else if (open?.[1]) {
      fence = { char: open[1][0] ?? '`', length: open[1].length };
      lines[i] = blank(line);
    }
  }
  return lines
    .join('\n')
    .replace(/(?<!`)(`+)(?!`)(?:[^\n]|\n(?![ \t]*\n))*?(?<!`)\1(?!`)/g, blank) // a code span ends at a blank line
    .replace(/<!--[\s\S]*?-->/g, blank)
    .replace(/%%[\s\S]*?%%/g, blank);
}

/** `[[target#heading|alias]]` and `![[embed]]`; `\|` (the table-cell form) counts as `|`. */
export function wikiLinks(prose: string): WikiLink[] {
  const links: WikiLink[] = [];
  for (const m of prose.matchAll(/(!?)\[\[([^[\]\n]+?)\]\]/g)) {
    const inner = (m[2] ?? '').replace(/\\\|/g, '|');
    const bar = inner.indexOf('|');
    const ref = bar === -1 ? inner : inner.slice(0, bar);
    const hash = ref.indexOf('#');
    links.push({
      target: (hash === -1 ? ref : ref.slice(0, hash)).trim(),
      heading: hash === -1 ? null : ref.slice(hash + 1).trim() || null,
      alias: bar === -1 ? null : inner.slice(bar + 1).trim() || null,
      embed: m[1] === '!',
    });
  }
  return links;
}

/**
 * `#tags` in prose: after a line start, whitespace or an opening bracket; letters, digits, `_`, `-`
 * and `/` (nested tags); not only digits (`#1` is an issue number). A heading's `# ` is never a tag
 * because a tag has no space after the `#`; `a#b` and URL fragments are not tags either.
 */
export function hashTags(prose: string): string[] {
  const tags: string[] = [];
  for (const m of prose.matchAll(/(?<=^|[\s([{,;])#([\p{L}\p{N}_/-]+)/gmu)) {
    const tag = (m[1] ?? '').replace(/[/-]+$/, '');
    if (tag && !/^[\p{N}_/-]+$/u.test(tag)) tags.push(tag);
  }
  return tags;
}

/** ATX (`# H`) and setext (`H` over `===` / `---`) headings of prose. */
export function markdownHeadings(prose: string): Array<{ level: number; text: string }> {
  const lines = prose.split('\n');
  const headings: Array<{ level: number; text: string }> = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const atx = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line);
    const next = lines[i + 1] ?? '';
    if (atx?.[1]) {
      const text = collapseWhitespace(atx[2] ?? '');
      if (text) headings.push({ level: atx[1].length, text });
    } else if (line.trim() && !/^ {0,3}([-*+]|\d+[.)])\s/.test(line) && /^ {0,3}(=+|-+)[ \t]*$/.test(next)) {
      headings.push({ level: next.trim().startsWith('=') ? 1 : 2, text: collapseWhitespace(line) });
      i++;
    }
  }
  return headings;
}

function uniqueCaseless(values: string[]): string[] {
  const seen = new Set<string>();
  return values.filter((v) => {
    const key = v.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function frontMatterTags(value: unknown): string[] {
  const list = Array.isArray(value) ? value : typeof value === 'string' ? value.split(/[,\s]+/) : [];
  return list
    .filter((t): t is string => typeof t === 'string')
    .map((t) => t.trim().replace(/^#/, ''))
    .filter((t) => t !== '');
}

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

/**
 * [[links]] in front matter values (Obsidian properties: `up: "[[Home]]"`, `related: ["[[A]]", "[[B]]"]`).
 * Unquoted, YAML reads `[[Home]]` as a list in a list: that is a link too.
 */
function frontMatterLinks(front: Record<string, unknown> | null): WikiLink[] {
  const links: WikiLink[] = [];
  const visit = (value: unknown): void => {
    if (typeof value === 'string') links.push(...wikiLinks(value));
    else if (Array.isArray(value)) {
      const inner: unknown =
        value.length === 1 && Array.isArray(value[0]) && value[0].length === 1 ? value[0][0] : undefined;
      if (typeof inner === 'string') links.push(...wikiLinks(`[[${inner}]]`));
      else value.forEach(visit);
    } else if (value && typeof value === 'object' && !(value instanceof Date)) Object.values(value).forEach(visit);
  };
  visit(front ?? {});
  return links;
}

function frontMatterDate(front: Record<string, unknown> | null): string | null {
  for (const key of ['date', 'created']) {
    const value = front?.[key];
    if (typeof value !== 'string' && !(value instanceof Date)) continue;
    const date = new Date(value);
    if (!Number.isNaN(date.getTime())) return date.toISOString();
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
  const warnings: string[] = [];
  let frontMatter: Record<string, unknown> | null = null;
  let body = source.replace(/^\uFEFF/, '');
  const block = FRONT_MATTER.exec(source);
  if (block) {
    try {
      const parsed: unknown = parseYaml(block[1] ?? '', { maxAliasCount: 100 });
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
        frontMatter = parsed as Record<string, unknown>;
      else if (parsed !== null) warnings.push('front matter is not a YAML mapping; ignored');
      body = source.slice(block[0].length);
    } catch (error) {
      const why = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
      warnings.push(`front matter is not valid YAML (${why}); kept as text`);
    }
  }
  const prose = maskCode(body);
  const headings = markdownHeadings(prose);
  const title =
    typeof frontMatter?.['title'] === 'string' && frontMatter['title'].trim() ? frontMatter['title'].trim() : null;
  return {
    title: title ?? headings.find((h) => h.level === 1)?.text ?? null,
    text: [frontMatterText(frontMatter), body.trim()].filter(Boolean).join('\n\n'),
    occurredAt: frontMatterDate(frontMatter),
    fields: {
      format: 'markdown',
      frontMatter,
      links: [...frontMatterLinks(frontMatter), ...wikiLinks(prose)],
      tags: uniqueCaseless([...frontMatterTags(frontMatter?.['tags']), ...hashTags(prose)]),
      headings: headings.map((h) => h.text),
    },
    warnings,
  };
}
