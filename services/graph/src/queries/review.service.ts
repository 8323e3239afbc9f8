import { Inject, Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import { OWNER_SCOPE, ReviewList, type ParamsOf, type ResultOf } from '@memex/contracts';
import { DATABASE, RpcMethod } from '@memex/runtime';
import { confirmedSql, rejectedSql } from '../projection/links.js';
import { evidenceOf, type Summary } from './entities.service.js';
import { summaries, type Db } from './access.js';
import { mergeSuggestions, samePhoneGroups } from './merge-suggestions.js';
import { nameDisagreements } from './name-review.js';

type Entry = ResultOf<typeof ReviewList>['items'][number];

/** Inferred links below this confidence wait for the owner's word. */
export const LOW_CONFIDENCE = 0.5;

@Injectable()
export class ReviewService {
  constructor(@Inject(DATABASE) private readonly db: Db) {}

  /** The owner's queue: nothing here is merged or believed until decided (seed §5.1). */
  @RpcMethod(ReviewList)
  async list(params: ParamsOf<typeof ReviewList>): Promise<ResultOf<typeof ReviewList>> {
    const limit = params.limit ?? 100;
    const items: Entry[] = [];
    const wanted = (kind: Entry['kind']) => params.kind === undefined || params.kind === kind;
    if (wanted('merge')) items.push(...(await this.merges(limit)));
    if (wanted('name')) items.push(...(await nameDisagreements(this.db, limit)));
    if (wanted('link')) items.push(...(await this.lowConfidence(limit)));
    return { items: items.slice(0, limit) };
  }

  /** People with the same full name (two words or more), or the same phone, each paired with the most seen of them. */
  private async merges(limit: number): Promise<Entry[]> {
    const groups = await sql<{ ids: number[] }>`
      select array_agg(id order by weight desc, id) as ids from entities
      where kind = 'person' and merged_into is null and name like '% %'
      group by lower(name) having count(*) > 1
      order by max(weight) desc, lower(name) limit ${limit}`.execute(this.db);
    const dismissed = new Set(
      (
        await sql<{
          suggestion: string;
        }>`select suggestion from review_dismissed where suggestion like 'merge:%'`.execute(this.db)
      ).rows.map((r) => r.suggestion),
    );
    const byName = groups.rows.map((g) => ({ ids: g.ids.map(Number) }));
    return mergeSuggestions(this.db, [...byName, ...(await samePhoneGroups(this.db, limit))], dismissed);
  }

  private async lowConfidence(limit: number): Promise<Entry[]> {
    const rows = await sql<{
      id: string;
      rel: string;
      src_entity: number | null;
      src_item: string | null;
      dst_entity: number | null;
      dst_item: string | null;
      made_by: string;
      confidence: number;
      valid_from: Date | null;
      valid_to: Date | null;
    }>`
      select l.id, l.rel, l.src_entity, l.src_item, l.dst_entity, l.dst_item, l.made_by, l.confidence, l.valid_from, l.valid_to
      from links l
      where l.basis = 'inferred' and l.status = 'active' and l.confidence < ${LOW_CONFIDENCE}
        and not ${rejectedSql(sql.ref('l'))} and not ${confirmedSql(sql.ref('l'))}
      order by l.confidence, l.id limit ${limit}`.execute(this.db);
    const names = await summaries(
      this.db,
      OWNER_SCOPE,
      rows.rows.flatMap((r) => [r.src_entity, r.dst_entity].filter((x): x is number => x !== null).map(Number)),
    );
    const evidence = await evidenceOf(
      this.db,
      OWNER_SCOPE,
      rows.rows.map((r) => r.id),
    );
    const end = (entity: number | null, item: string | null): Summary | { item: string } =>
      entity !== null ? names.get(Number(entity))! : { item: item! };
    return rows.rows.map((row) => {
      const src = end(row.src_entity, row.src_item);
      const dst = end(row.dst_entity, row.dst_item);
      const label = (x: Summary | { item: string }) => ('item' in x ? `item:${x.item}` : x.name);
      return {
        id: `link:${row.id}`,
        kind: 'link' as const,
        summary: `${label(src)} ${row.rel} ${label(dst)} (${row.made_by}, confidence ${Math.round(row.confidence * 100) / 100})`,
        entities: [src, dst].filter((x): x is Summary => !('item' in x)),
        fact: {
          link_id: row.id,
          rel: row.rel,
          direction: 'out' as const,
          other: 'item' in dst ? { item: { id: dst.item, kind: '', title: '', occurred_at: null } } : { entity: dst },
          basis: 'inferred' as const,
          made_by: row.made_by,
          confidence: Math.round(row.confidence * 1000) / 1000,
          valid_from: row.valid_from?.toISOString() ?? null,
          valid_to: row.valid_to?.toISOString() ?? null,
          evidence: evidence.get(row.id) ?? [],
          confirmed: false,
        },
      };
    });
  }
}
