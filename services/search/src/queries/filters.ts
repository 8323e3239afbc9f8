import { sql, type RawBuilder } from 'kysely';
import { parseDate, type ParamsOf, type ParsedQuery, type Search } from '@memex/contracts';
import { escapeLike } from './keyword.js';

type Condition = RawBuilder<unknown>;

const contains = (values: string[]) => values.map((v) => `%${escapeLike(v.toLowerCase())}%`);

/**
 * The filters of a search as conditions on the items table (alias `i`): the API's fields and the
 * query syntax's, all of which must hold; several values of one filter are alternatives.
 */
export function filterConditions(params: ParamsOf<typeof Search>, parsed: ParsedQuery): Condition[] {
  const conditions: Condition[] = [];
  const { filters } = parsed;
  const anyOf = (column: string, values: string[] | undefined) => {
    if (values?.length) conditions.push(sql`${sql.ref(column)} = any(${values}::text[])`);
  };
  anyOf('i.kind', params.kinds);
  anyOf(
    'i.kind',
    filters.kind.map((k) => k.toLowerCase()),
  );
  const sources = (values: string[] | undefined) => {
    if (values?.length)
      conditions.push(
        // source:mbox, source:import:folder:papers, or the bare id of a source (memex sources list: source:papers).
        sql`(i.source_kind = any(${values}::text[]) or i.source_kind || ':' || i.source_id = any(${values}::text[]) or i.source_id = any(${values}::text[]))`,
      );
  };
  sources(params.sources);
  sources(filters.source);
  const labels = (values: string[] | undefined) => {
    if (values?.length) conditions.push(sql`i.labels && ${values}::text[]`);
  };
  labels(params.labels);
  labels(filters.label);
  if (params.people?.length) {
    const patterns = contains(params.people);
    conditions.push(sql`(i.people_from ilike any(${patterns}::text[]) or i.people_to ilike any(${patterns}::text[]))`);
  }
  if (filters.from.length) conditions.push(sql`i.people_from ilike any(${contains(filters.from)}::text[])`);
  if (filters.to.length) conditions.push(sql`i.people_to ilike any(${contains(filters.to)}::text[])`);
  // A paper's authors are who it is from (tier 0's paper.extracted); author: asks for papers.
  if (filters.author.length)
    conditions.push(sql`(i.kind = 'paper' and i.people_from ilike any(${contains(filters.author)}::text[]))`);
  // What media saw (photo.tagged): object:dog is the detector's tag, tag:beach the vision model's.
  const tagged = [
    ...filters.object.map((v) => `object:${v.toLowerCase()}`),
    ...filters.tag.map((v) => `tag:${v.toLowerCase()}`),
  ];
  if (tagged.length) conditions.push(sql`i.tags && ${tagged}::text[]`);
  // Lower bounds are inclusive, upper bounds exclusive: after:2020 before:2021 is the year 2020.
  const since = [
    ...(params.from ? [parseDate(params.from, 'from')] : []),
    ...filters.after.map((v) => parseDate(v, 'after')),
  ];
  const until = [
    ...(params.to ? [parseDate(params.to, 'to')] : []),
    ...filters.before.map((v) => parseDate(v, 'before')),
  ];
  for (const date of since) conditions.push(sql`i.occurred_at >= ${date}`);
  for (const date of until) conditions.push(sql`i.occurred_at < ${date}`);
  return conditions;
}

export function allOf(conditions: Condition[]): Condition {
  return conditions.length === 0 ? sql`true` : sql`(${sql.join(conditions, sql` and `)})`;
}
