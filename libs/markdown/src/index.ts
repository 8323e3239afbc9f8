import { parse as parseYaml } from 'yaml';

/**
 * Markdown as the memex reads it (Obsidian-flavoured notes included): YAML front matter, [[wiki
 * links]] and #tags found only in prose (never in code or comments), headings. One reader for the
 * ingest Markdown handler and for notes (`note.put` carries what it read), so a note and a
 * Markdown document with the same source have the same links and tags.
 */

/** A `[[target#heading|alias]]` (or `![[embed]]`). */
export interface WikiLink {
  target: string;
  heading: string | null;
  alias: string | null;
  embed: boolean;
}

export interface MarkdownStructure {
  /** The YAML front matter; null when absent, not YAML or not a mapping. */
  frontMatter: Record<string, unknown> | null;
  /** Why a front matter block was not read, when it was not. */
  frontMatterProblem: string | null;
  /** The source after a front matter block that was read (a block that was not stays in). */
  body: string;
  /** [[links]] of the front matter values, then of the prose, in order. */
  links: WikiLink[];
  /** Front matter `tags`, then #tags of the prose; without the #, first spelling kept. */
  tags: string[];
  headings: Array<{ level: number; text: string }>;
}

const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;

const collapse = (text: string): string => text.replace(/\s+/g, ' ').trim();

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
      const text = collapse(atx[2] ?? '');
      if (text) headings.push({ level: atx[1].length, text });
    } else if (line.trim() && !/^ {0,3}([-*+]|\d+[.)])\s/.test(line) && /^ {0,3}(=+|-+)[ \t]*$/.test(next)) {
      headings.push({ level: next.trim().startsWith('=') ? 1 : 2, text: collapse(line) });
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

/** Reads a Markdown source: front matter, links, tags and headings (see MarkdownStructure). */
export function readMarkdown(source: string): MarkdownStructure {
  let frontMatter: Record<string, unknown> | null = null;
  let frontMatterProblem: string | null = null;
  let body = source.replace(/^\uFEFF/, '');
  const block = FRONT_MATTER.exec(source);
  if (block) {
    try {
      const parsed: unknown = parseYaml(block[1] ?? '', { maxAliasCount: 100 });
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
        frontMatter = parsed as Record<string, unknown>;
      else if (parsed !== null) frontMatterProblem = 'front matter is not a YAML mapping; ignored';
      body = source.slice(block[0].length);
    } catch (error) {
      const why = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
      frontMatterProblem = `front matter is not valid YAML (${why}); kept as text`;
    }
  }
  const prose = maskCode(body);
  return {
    frontMatter,
    frontMatterProblem,
    body,
    links: [...frontMatterLinks(frontMatter), ...wikiLinks(prose)],
    tags: uniqueCaseless([...frontMatterTags(frontMatter?.['tags']), ...hashTags(prose)]),
    headings: markdownHeadings(prose),
  };
}
