import { Inject, Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import { ContextBrief, type ParamsOf, type ResultOf, type Scope } from '@memex/contracts';
import { DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import { anyWord, normalizeKey } from '../domain/keys.js';
import { rejectedSql } from '../projection/links.js';
import { listTrails } from '../commands/trails.service.js';
import { entityVisible, interactive, itemVisible, linkVisible, summaries, type Db, type Summary } from './access.js';
import { factsAbout, timelineOf } from './entities.service.js';

type Line = ResultOf<typeof ContextBrief>['lines'][number];
type Section = Line['section'];

export const DEFAULT_BRIEF_BYTES = 4096;
/** No line is longer than this (UTF-8 bytes), so one long title cannot eat the brief. */
const MAX_LINE_BYTES = 320;
const MAX_THINGS = 8;
const SECTIONS: Section[] = ['fact', 'commitment', 'event', 'note', 'trail'];
const COMMITMENT_RELS = ['committed_to'];
const THING_KINDS = ['person', 'org', 'project', 'topic', 'place', 'host', 'repo'];

const encoder = new TextEncoder();
const bytes = (text: string) => encoder.encode(text).length;

/** Cuts text to at most `max` UTF-8 bytes on a character boundary, marking the cut. */
export function clip(text: string, max: number): string {
  if (bytes(text) <= max) return text;
  let out = '';
  for (const char of text) {
    if (bytes(out + char) > max - 3) break;
    out += char;
  }
  return `${out}…`;
}

/** Titles from mail and the web are untrusted: quoted as data, one line, never instructions. */
function quoted(text: string): string {
  return `“${text.replace(/\s+/g, ' ').replace(/[“”]/g, '"').trim()}”`;
}

function day(iso: string | null): string {
  return iso ? iso.slice(0, 10) : 'undated';
}

function line(section: Section, text: string, refs: string[], inferred: boolean): Line {
  const suffix = ` [${refs.join(' ')}]`;
  const head = `${section}: ${inferred ? '(inferred) ' : ''}`;
  return {
    section,
    text: `${head}${clip(text, MAX_LINE_BYTES - bytes(head) - bytes(suffix))}${suffix}`,
    refs,
    inferred,
  };
}

/**
 * Fits lines into the budget: sections take turns (facts first) so no section starves the others,
 * a line that does not fit is skipped for shorter ones after it, and the result is never over.
 */
export function fitToBudget(candidates: Map<Section, Line[]>, budget: number): { lines: Line[]; omitted: number } {
  const queues = SECTIONS.map((s) => [...(candidates.get(s) ?? [])]);
  const chosen = new Map<Section, Line[]>();
  let used = 0;
  let omitted = 0;
  while (queues.some((q) => q.length > 0)) {
    for (const [i, queue] of queues.entries()) {
      const next = queue.shift();
      if (!next) continue;
      const cost = bytes(next.text) + (used === 0 ? 0 : 1);
      if (used + cost > budget) {
        omitted++;
        continue;
      }
      used += cost;
      const list = chosen.get(SECTIONS[i]!) ?? [];
      list.push(next);
      chosen.set(SECTIONS[i]!, list);
    }
  }
  return { lines: SECTIONS.flatMap((s) => chosen.get(s) ?? []), omitted };
}

/** The context a session starts from (seed §3.2): its labels' things, what is known and recent about them. */
@Injectable()
export class BriefService {
  constructor(@Inject(DATABASE) private readonly db: Db) {}

  @RpcMethod(ContextBrief)
  async brief(params: ParamsOf<typeof ContextBrief>, call: CallContext): Promise<ResultOf<typeof ContextBrief>> {
    const scope = call.scope;
    return interactive(this.db, async (db) => {
      const thingIds = await this.things(db, scope, params.labels, params.text ?? '');
      const things = await summaries(db, scope, thingIds);
      const ids = thingIds.filter((id) => things.has(id));
      const candidates = new Map<Section, Line[]>([
        ['fact', await this.facts(db, scope, ids, things)],
        ['commitment', await this.commitments(db, scope, ids)],
        ['event', await this.events(db, scope, ids, things, params.text ?? '')],
        ['note', await this.notes(db, scope, ids, params.text ?? '')],
        ['trail', await this.trails(db, scope, ids, params.text ?? '')],
      ]);
      const { lines, omitted } = fitToBudget(candidates, params.budget_bytes ?? DEFAULT_BRIEF_BYTES);
      const text = lines.map((l) => l.text).join('\n');
      return { text, bytes: bytes(text), lines, things: ids.map((id) => things.get(id)!), omitted };
    });
  }

  /**
   * Labels resolve to things (seed §3.2): a label that is a key (`person:…`, `org:…`,
   * `project:…`) directly; otherwise `client:acme` finds the thing named "acme" (or an org at
   * acme.*). The text adds addresses and keys it mentions and the names of things it spells out.
   */
  private async things(db: Db, scope: Scope, labels: string[], text: string): Promise<number[]> {
    const found: number[] = [];
    const add = (ids: number[]) => ids.forEach((id) => !found.includes(id) && found.push(id));
    const keys = [
      ...labels.filter((l) => /^[a-z][a-z_]*:.+/.test(l)),
      ...[...text.matchAll(/[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g)].map((m) => `person:${m[0]}`),
      ...[...text.matchAll(/\b(?:person|org|project|topic|place|repo|host):[^\s,;)]+/g)].map((m) => m[0]),
    ].flatMap((k) => {
      try {
        return [normalizeKey(k)];
      } catch {
        return [];
      }
    });
    const byKey = await sql<{ entity: number }>`
      select k.entity from entity_keys k where k.key = any(${keys}::text[]) and ${entityVisible(scope, sql`k.entity`)}`.execute(
      db,
    );
    add(byKey.rows.map((r) => Number(r.entity)));
    const names = [
      ...labels.filter((l) => l.includes(':')).map((l) => l.slice(l.indexOf(':') + 1).toLowerCase()),
      ...[...text.matchAll(/\b\p{Lu}[\p{L}'-]+(?:\s+\p{Lu}[\p{L}'-]+){0,2}/gu)].map((m) => m[0].toLowerCase()),
      // However it is typed: "ask acme about the pyramid launch" names acme and pyramid too.
      ...textNames(text),
    ];
    if (names.length > 0) {
      // One thing per name, the one most in touch: a name in a message is a guess, not a key.
      const byName = await sql<{ id: number }>`
        select id from (
          select distinct on (lower(e.name)) e.id, e.weight from entities e
          where e.merged_into is null and e.kind = any(${THING_KINDS}::text[]) and lower(e.name) = any(${names}::text[])
            and ${entityVisible(scope, sql`e.id`)}
          order by lower(e.name), e.weight desc, e.id) x
        order by weight desc, id limit ${MAX_THINGS}`.execute(db);
      add(byName.rows.map((r) => Number(r.id)));
      const byDomain = await sql<{ id: number }>`
        select e.id from entities e
        where e.kind = 'org' and e.merged_into is null and split_part(substr(e.key, 5), '.', 1) = any(${names}::text[])
          and ${entityVisible(scope, sql`e.id`)}
        order by e.weight desc, e.id limit ${MAX_THINGS}`.execute(db);
      add(byDomain.rows.map((r) => Number(r.id)));
    }
    return found.slice(0, MAX_THINGS);
  }

  private async facts(db: Db, scope: Scope, ids: number[], things: Map<number, Summary>): Promise<Line[]> {
    const facts = await factsAbout(db, scope, ids, 40);
    return facts
      .filter((f) => !COMMITMENT_RELS.includes(f.rel))
      .map((f) => {
        const self = things.get(f.self)!.name;
        const other = 'entity' in f.other ? f.other.entity.name : f.other.item.title;
        const [a, b] = f.direction === 'out' ? [self, other] : [other, self];
        const how =
          f.basis === 'inferred'
            ? ` (${f.made_by}, confidence ${f.confidence}${f.confirmed ? ', confirmed' : ''})`
            : f.made_by === 'user'
              ? ' (you said so)'
              : '';
        const since = f.valid_from ? ` since ${day(f.valid_from)}` : '';
        const refs = [`link:${f.link_id}`, ...f.evidence.slice(0, 1).map((e) => `item:${e.item}`)];
        return line(
          'fact',
          `${a} ${f.rel.replace(/_/g, ' ')} ${b}${since}${how}`,
          refs,
          f.basis === 'inferred' && !f.confirmed,
        );
      });
  }

  /** Commitments still open (no end, or an end ahead), about the things or, without things, anyone's. */
  private async commitments(db: Db, scope: Scope, ids: number[]): Promise<Line[]> {
    const rows = await sql<{
      id: string;
      src_entity: number | null;
      dst_entity: number | null;
      dst_item: string | null;
      basis: string;
      made_by: string;
      valid_to: Date | null;
      title: string | null;
    }>`
      select l.id, l.src_entity, l.dst_entity, l.dst_item, l.basis, l.made_by, l.valid_to, i.title
      from links l left join items i on i.id = l.dst_item
      where l.rel = any(${COMMITMENT_RELS}::text[]) and l.status = 'active' and (l.valid_to is null or l.valid_to > now())
        ${ids.length > 0 ? sql`and (l.src_entity = any(${ids}::bigint[]) or l.dst_entity = any(${ids}::bigint[]))` : sql``}
        and not ${rejectedSql(sql.ref('l'))} and ${linkVisible(scope)}
      order by l.valid_to asc nulls last, l.id limit 20`.execute(db);
    const names = await summaries(
      db,
      scope,
      rows.rows.flatMap((r) => [r.src_entity, r.dst_entity].filter((x): x is number => x !== null).map(Number)),
    );
    return rows.rows.flatMap((r) => {
      const who = r.src_entity !== null ? names.get(Number(r.src_entity))?.name : undefined;
      const what =
        r.dst_entity !== null ? names.get(Number(r.dst_entity))?.name : r.title !== null ? quoted(r.title) : undefined;
      if (!who || !what) return [];
      const due = r.valid_to ? ` by ${day(r.valid_to.toISOString())}` : '';
      const refs = [`link:${r.id}`, ...(r.dst_item ? [`item:${r.dst_item}`] : [])];
      return [
        line(
          'commitment',
          `${who} committed to ${what}${due}${r.basis === 'inferred' ? ` (${r.made_by})` : ''}`,
          refs,
          r.basis === 'inferred',
        ),
      ];
    });
  }

  /**
   * The newest items about the things, then items whose titles hold the text's words (without
   * things or text: the newest overall); never spam, never an undated item (its time is unknown,
   * so it is not recent).
   */
  private async events(
    db: Db,
    scope: Scope,
    ids: number[],
    things: Map<number, Summary>,
    text: string,
  ): Promise<Line[]> {
    const per = ids.length > 0 ? Math.max(3, Math.ceil(12 / ids.length)) : 8;
    const out: Line[] = [];
    const seen = new Set<string>();
    const titled = await itemsTitled(db, scope, text, 8);
    const sources = ids.length > 0 || titled.length > 0 ? ids : [null];
    for (const id of sources) {
      for (const entry of await timelineOf(db, scope, id, { limit: per, noSpam: true, datedOnly: true })) {
        if (seen.has(entry.item.id)) continue;
        seen.add(entry.item.id);
        const who =
          id !== null ? ` — ${things.get(id)!.name}${entry.rels.length ? ` (${entry.rels.join(', ')})` : ''}` : '';
        out.push(
          line(
            'event',
            `${day(entry.item.occurred_at)} ${entry.item.kind} ${quoted(entry.item.title)}${who}`,
            [`item:${entry.item.id}`],
            false,
          ),
        );
      }
    }
    for (const item of titled) {
      if (seen.has(item.id)) continue;
      seen.add(item.id);
      out.push(
        line('event', `${day(item.occurred_at)} ${item.kind} ${quoted(item.title)}`, [`item:${item.id}`], false),
      );
    }
    return out;
  }

  /** Notes linked to the things, then notes matching the text; an agent's or pipeline's note is inferred. */
  private async notes(db: Db, scope: Scope, ids: number[], text: string): Promise<Line[]> {
    const rows = await sql<{ id: string; title: string; excerpt: string; made_by: string; occurred_at: Date | null }>`
      select i.id, i.title, i.excerpt, i.made_by, i.occurred_at from items i
      where i.kind = 'note' and ${itemVisible(scope)} and (
        exists (select 1 from links l where l.status = 'active' and (
          (l.src_item = i.id and l.dst_entity = any(${ids}::bigint[])) or (l.dst_item = i.id and l.src_entity = any(${ids}::bigint[]))))
        ${anyWord(text) ? sql`or to_tsvector('english', i.title || ' ' || i.excerpt) @@ to_tsquery('english', ${anyWord(text)})` : sql``})
      order by i.occurred_at desc nulls last, i.id desc limit 10`.execute(db);
    return rows.rows.map((n) => {
      const body = n.excerpt.replace(/\s+/g, ' ').trim();
      const byOthers = n.made_by !== 'user';
      return line(
        'note',
        `${n.title}${body && body !== n.title ? ` — ${body}` : ''}${byOthers ? ` (by ${n.made_by})` : ''}`,
        [`item:${n.id}`],
        byOthers,
      );
    });
  }

  private async trails(db: Db, scope: Scope, ids: number[], text: string): Promise<Line[]> {
    const lists = [
      ...(await Promise.all(ids.map((id) => listTrails(db, scope, { through: id, limit: 3 })))).flat(),
      ...(anyWord(text) ? await listTrails(db, scope, { text, limit: 3 }) : []),
    ];
    const seen = new Set<string>();
    return lists.flatMap((t) => {
      if (seen.has(t.trail_id)) return [];
      seen.add(t.trail_id);
      const about = t.description ? ` — ${t.description.replace(/\s+/g, ' ')}` : '';
      return [
        line(
          'trail',
          `${t.name}${about} (${t.steps} steps, by ${t.made_by})`,
          [`trail:${t.trail_id}`],
          t.made_by !== 'user',
        ),
      ];
    });
  }
}

/** Lowercase words of the text, and runs of two and three, that could be names of things. */
function textNames(text: string): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu) ?? [];
  const out = new Set<string>();
  for (let i = 0; i < words.length && out.size < 200; i++) {
    for (let n = 1; n <= 3 && i + n <= words.length; n++) {
      const name = words.slice(i, i + n).join(' ');
      if (name.length >= 3) out.add(name);
    }
  }
  return [...out];
}

/**
 * Dated, visible, non-spam mail threads, documents and papers whose titles hold the most of the
 * text's words (English stop words aside), newest first among equals: what the text is about
 * when it names no thing. Read off the title trigram indexes of those kinds.
 */
async function itemsTitled(
  db: Db,
  scope: Scope,
  text: string,
  limit: number,
): Promise<Array<{ id: string; kind: string; title: string; occurred_at: string | null }>> {
  if (!anyWord(text)) return [];
  const words = (
    await sql<{ word: string }>`select distinct lower(token) as word from ts_debug('english', ${text.slice(0, 2000)})
      where alias in ('asciiword', 'word') and length(token) >= 3 and array_length(lexemes, 1) > 0 limit 30`.execute(db)
  ).rows.map((r) => r.word);
  if (words.length === 0) return [];
  // Word tokens are letters only: nothing to escape. A constant pattern lets the trigram indexes serve it.
  const pattern = `\\m(${words.join('|')})\\M`;
  const rows = await sql<{ id: string; kind: string; title: string; occurred_at: Date | null }>`
    select i.id, i.kind, i.title, i.occurred_at from items i
    where lower(i.title) ~ ${pattern}
      and ((i.kind = 'email' and i.thread_key is not null) or i.kind in ('paper', 'document'))
      and i.occurred_at is not null and not i.spam and ${itemVisible(scope)}
    order by (select count(*) from unnest(${words}::text[]) w where lower(i.title) ~ ('\\m' || w || '\\M')) desc,
      i.occurred_at desc, i.id desc
    limit ${limit}`.execute(db);
  return rows.rows.map((r) => ({ ...r, occurred_at: r.occurred_at?.toISOString() ?? null }));
}
