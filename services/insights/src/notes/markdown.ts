import { parse as parseYaml, stringify as toYaml } from 'yaml';
import type { EngineNote } from '../engine/index.js';

/**
 * What the insights engine reads from a memex note's Markdown body: front matter, [[link]] targets
 * and #tags. It follows the ingest Markdown handler's rules (services/ingest
 * handlers/document/markdown.ts, which the ingest package does not export), so a note and a
 * Markdown document with the same source yield the same links and tags: YAML front matter at the
 * very top; links and tags only in prose (not in code blocks, code spans or comments); a tag is
 * `#` + letters, digits, `_`, `-`, `/`, not only digits, after a line start, space or bracket;
 * front matter `tags` count as tags.
 */
export interface ParsedMarkdown {
  frontMatter: Record<string, unknown>;
  /** Targets as written (`Target#Heading|alias` whole: the engine normalises them). */
  links: string[];
  tags: string[];
}

const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** Code and comments blanked out, so nothing in them counts as a link or a tag. */
function prose(body: string): string {
  const lines: string[] = [];
  let fence: string | null = null;
  for (const line of body.split('\n')) {
    const marker = FENCE.exec(line)?.[1];
    if (fence === null && marker) fence = marker;
    else if (fence === null) lines.push(line);
    else if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker)
      fence = null;
  }
  return lines
    .join('\n')
    .replace(/(`+)(?!`)[^\n]*?(?<!`)\1(?!`)/g, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/%%[\s\S]*?%%/g, ' ');
}

function frontMatterOf(source: string): { frontMatter: Record<string, unknown>; body: string } {
  const block = FRONT_MATTER.exec(source);
  if (!block) return { frontMatter: {}, body: source };
  try {
    const parsed: unknown = parseYaml(block[1] ?? '', { maxAliasCount: 100 });
    const frontMatter =
      parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
        ? (parsed as Record<string, unknown>)
        : {};
    return { frontMatter, body: source.slice(block[0].length) };
  } catch {
    // Not YAML: the ingest handler keeps such a block as text, and so do we.
    return { frontMatter: {}, body: source };
  }
}

/** Front matter `tags: [a, b]` or `tags: a, b` (a leading # allowed). */
function frontMatterTags(value: unknown): string[] {
  const list: unknown[] = Array.isArray(value) ? value : typeof value === 'string' ? value.split(/[,\s]+/) : [];
  return list.flatMap((t) => (typeof t === 'string' && t.trim().replace(/^#/, '') ? [t.trim().replace(/^#/, '')] : []));
}

export function parseNoteMarkdown(source: string): ParsedMarkdown {
  const { frontMatter, body } = frontMatterOf(source);
  const text = prose(body);
  const links = [...text.matchAll(/!?\[\[([^[\]\n]+?)\]\]/g)].map((m) => (m[1] ?? '').replace(/\\\|/g, '|').trim());
  const hashTags = [...text.matchAll(/(?<=^|[\s([{,;])#([\p{L}\p{N}_/-]+)/gmu)]
    .map((m) => (m[1] ?? '').replace(/[/-]+$/, ''))
    .filter((tag) => tag !== '' && !/^[\p{N}_/-]+$/u.test(tag));
  const tags: string[] = [];
  const seen = new Set<string>();
  for (const tag of [...frontMatterTags(frontMatter['tags']), ...hashTags]) {
    if (seen.has(tag.toLowerCase())) continue;
    seen.add(tag.toLowerCase());
    tags.push(tag);
  }
  return { frontMatter, links: links.filter((l) => l !== ''), tags };
}

/**
 * A generated note (tests, benchmarks) as a memex note's Markdown: its dates, front matter and
 * tags in front matter, its links as [[links]] (`titleOf` maps a link to the title to write).
 * parseNoteMarkdown reads back the same front matter, links and tags.
 */
export function toMarkdown(note: EngineNote, titleOf: (link: string) => string): string {
  const front: Record<string, unknown> = { date: note.createdAt.toISOString(), ...note.frontMatter };
  if (note.updatedAt.getTime() !== note.createdAt.getTime()) front['updated'] = note.updatedAt.toISOString();
  if (note.tags.length > 0) front['tags'] = note.tags;
  const links = note.links.map((link) => `See [[${titleOf(link)}]].`).join('\n');
  return `---\n${toYaml(front)}---\n${note.title}\n\n${links}\n`;
}
