import { createHash } from 'node:crypto';
import { MemexError } from '@memex/contracts';

/**
 * Keys name things (seed §4.3): `person:<address>`, `org:<domain>`, `topic:<slug>`,
 * `place:geonames:<id>`, `claim:<hash>`, `project:<name>`, any other `<kind>:<name>`.
 * `item:<id>` names an item and `entity:<id>` a thing by id; neither is an entity key.
 */
export type Ref = { key: string; kind: string } | { item: string };

const REF = /^([a-z][a-z_]*):(.+)$/;

/** The canonical spelling of a key, so one thing never gets two keys by accident of case. */
export function normalizeKey(key: string): string {
  const match = REF.exec(key.trim());
  if (!match) throw new MemexError('invalid_params', `"${key}" is not a key (<kind>:<name>)`);
  const kind = match[1]!;
  const rest = match[2]!.trim();
  switch (kind) {
    case 'person':
    case 'org':
      return `${kind}:${rest.toLowerCase()}`;
    case 'topic':
      return `topic:${slugify(rest)}`;
    default:
      return `${kind}:${rest}`;
  }
}

export function parseRef(ref: string): Ref {
  const match = REF.exec(ref.trim());
  if (!match) throw new MemexError('invalid_params', `"${ref}" is neither a key (<kind>:<name>) nor item:<id>`);
  if (match[1] === 'item') return { item: match[2]!.trim() };
  if (match[1] === 'entity')
    throw new MemexError('invalid_params', `entity:<id> is resolved to a key before it is stored`);
  const key = normalizeKey(ref);
  return { key, kind: match[1]! };
}

export function refString(ref: Ref): string {
  return 'item' in ref ? `item:${ref.item}` : ref.key;
}

export function kindOfKey(key: string): string {
  return key.slice(0, key.indexOf(':'));
}

export function slugify(text: string): string {
  return (
    foldText(text)
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'untitled'
  );
}

/** Lowercase, accents dropped, whitespace collapsed: how names are compared and searched. */
export function foldText(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}

/** The name a thing has before anyone names it: the address, the domain, the slug in words. */
export function defaultName(key: string): string {
  const kind = kindOfKey(key);
  const rest = key.slice(kind.length + 1);
  if (kind === 'topic' || kind === 'project') return rest.replace(/-/g, ' ');
  return rest;
}

/** 52 bits of sha256: entity ids are derived from the founding key, so a replay gives the same ids. */
export function hashId(text: string): number {
  return parseInt(createHash('sha256').update(text).digest('hex').slice(0, 13), 16);
}

/** A link's id: 80 bits of sha256 over what makes it one claim (ends, relation, maker). */
export function linkId(src: string, rel: string, dst: string, madeBy: string): string {
  return createHash('sha256').update(`${src}\u0000${rel}\u0000${dst}\u0000${madeBy}`).digest('hex').slice(0, 20);
}

/** The pipeline of a maker (`understand-v1@llama3` → `understand-v1`); `user` and sessions are their own. */
export function pipelineOf(madeBy: string): string {
  const at = madeBy.lastIndexOf('@');
  return at > 0 ? madeBy.slice(0, at) : madeBy;
}

/** A tsquery matching any of the text's words (letters and digits only, so nothing needs escaping). */
export function anyWord(text: string): string | null {
  const words = [...new Set(text.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [])].slice(0, 30);
  return words.length > 0 ? words.join(' | ') : null;
}
