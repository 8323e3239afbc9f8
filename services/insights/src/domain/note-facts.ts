import { createHash } from 'node:crypto';
import path from 'node:path';
import type { EventOf, ItemIngested, NotePut } from '@memex/contracts';

/** A note as the insights read model keeps it: what detection reads, plus what scope checks need. */
export interface NoteFacts {
  id: string;
  kind: 'note' | 'document';
  title: string;
  /** Other names [[links]] may use: a document's file name, front matter `aliases`. */
  aliases: string[];
  tags: string[];
  links: string[];
  front_matter: Record<string, unknown>;
  /** Covers everything an edit can change (title, body with its front matter, tags and links). */
  content_hash: string;
  /** The revision pipelines embed: a note's put sequence, a document's revision. */
  revision: number;
  labels: string[];
  spam: boolean;
  created_at: Date;
  updated_at: Date;
}

/** What a new version keeps from the stored one. */
export interface PreviousVersion {
  created_at: Date;
}

const MARKDOWN_TYPES = new Set(['text/markdown', 'text/x-markdown']);

function frontMatterDate(frontMatter: Record<string, unknown>, keys: string[]): Date | null {
  for (const key of keys) {
    const value = frontMatter[key];
    if (typeof value !== 'string' && !(value instanceof Date)) continue;
    const date = new Date(value);
    if (!Number.isNaN(date.getTime())) return date;
  }
  return null;
}

/**
 * When a note was written and last changed. Created: front matter `date`/`created`, else when
 * its first version happened. Updated: front matter `updated`/`modified`, else the first
 * version's creation, and for a later version when it was recorded (a re-imported document keeps
 * its own date as occurred_at, so that cannot tell an edit). Never before it was created.
 */
function noteTimes(
  frontMatter: Record<string, unknown>,
  event: { occurred_at: string; recorded_at: string },
  previous: PreviousVersion | undefined,
): { created_at: Date; updated_at: Date } {
  const created_at =
    frontMatterDate(frontMatter, ['date', 'created']) ?? previous?.created_at ?? new Date(event.occurred_at);
  const updated =
    frontMatterDate(frontMatter, ['updated', 'modified']) ?? (previous ? new Date(event.recorded_at) : created_at);
  return { created_at, updated_at: updated < created_at ? created_at : updated };
}

/**
 * Link targets that can name a note: a link or embed of a file that is not Markdown
 * (`![[diagram.png]]`, `[[paper.pdf]]`) points at an attachment, not at a note yet to be written.
 */
function noteTargets(targets: string[]): string[] {
  return targets.filter((target) => {
    const ext = /\.([A-Za-z0-9]{1,5})$/.exec(target.split(/[|#^]/, 1)[0]!.trim())?.[1];
    return ext === undefined || ext.toLowerCase() === 'md';
  });
}

/** Front matter `aliases: [A, B]` or `aliases: A` (Obsidian's names for a note). */
function aliasesOf(frontMatter: Record<string, unknown>): string[] {
  const value = frontMatter['aliases'];
  const list = typeof value === 'string' ? [value] : stringsOf(value);
  return list.map((alias) => alias.trim()).filter((alias) => alias !== '');
}

function hash(parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

export function notePutFacts(event: EventOf<typeof NotePut>, seq: number, previous?: PreviousVersion): NoteFacts {
  const { id, title, body, markdown } = event.data;
  const frontMatter = markdown.frontMatter ?? {};
  return {
    id,
    kind: 'note',
    title,
    aliases: aliasesOf(frontMatter),
    tags: markdown.tags,
    links: noteTargets(markdown.links.map((link) => link.target)),
    front_matter: frontMatter,
    content_hash: hash([title, body]),
    revision: seq,
    labels: [...event.labels].sort(),
    spam: event.spam ?? false,
    ...noteTimes(frontMatter, event, previous),
  };
}

function stringsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** A Markdown document as a note (the handler parsed its front matter, links and tags); null for any other item. */
export function markdownDocumentFacts(
  event: EventOf<typeof ItemIngested>,
  previous?: PreviousVersion,
): NoteFacts | null {
  const { data } = event;
  const markdown = data.kind === 'document' && data.meta.format === 'markdown' ? data.meta : null;
  if (!markdown || !MARKDOWN_TYPES.has(data.content_type.split(';')[0]!.trim().toLowerCase())) return null;
  const frontMatter = markdown.frontMatter ?? {};
  const links = markdown.links.map((link) => link.target);
  const filename = markdown.filename ? path.basename(markdown.filename) : null;
  return {
    id: data.id,
    kind: 'document',
    title: data.title,
    aliases: [...(filename ? [filename] : []), ...aliasesOf(frontMatter)],
    tags: markdown.tags,
    links: noteTargets(links),
    front_matter: frontMatter,
    // The bytes hold the front matter, links and tags; the title may come from outside them.
    content_hash: hash([data.title, data.content_sha256]),
    revision: data.revision,
    labels: [...event.labels].sort(),
    spam: event.spam ?? false,
    ...noteTimes(frontMatter, event, previous),
  };
}
