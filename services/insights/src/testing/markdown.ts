import { stringify as toYaml } from 'yaml';
import type { EngineNote } from '../domain/engine/index.js';

/**
 * A generated note (tests, benchmarks) as a memex note's Markdown: its dates, front matter and
 * tags in front matter, its links as [[links]] (`titleOf` maps a link to the title to write).
 * `note.put` carries back the same front matter, links and tags (@memex/markdown reads them).
 */
export function toMarkdown(note: EngineNote, titleOf: (link: string) => string): string {
  const front: Record<string, unknown> = { date: note.createdAt.toISOString(), ...note.frontMatter };
  if (note.updatedAt.getTime() !== note.createdAt.getTime()) front['updated'] = note.updatedAt.toISOString();
  if (note.tags.length > 0) front['tags'] = note.tags;
  const links = note.links.map((link) => `See [[${titleOf(link)}]].`).join('\n');
  return `---\n${toYaml(front)}---\n${note.title}\n\n${links}\n`;
}
