import { sql, type Expression, type SqlBool } from 'kysely';
import type { Scope } from '@memex/contracts';

export interface VisibilityColumns {
  kind: string;
  labels: string;
  spam: string;
}

/**
 * The scope rule of contracts' `isVisible`, as SQL for a where clause. Every query that returns
 * rows to a caller goes through it, so a scope can never be widened by a forgotten filter.
 */
export function visibleTo(
  scope: Scope,
  columns: VisibilityColumns = { kind: 'kind', labels: 'labels', spam: 'spam' },
): Expression<SqlBool> {
  if (scope.kind === 'owner') return sql<SqlBool>`true`;
  const kind = sql.ref(columns.kind);
  const labels = sql.ref(columns.labels);
  const spam = sql.ref(columns.spam);
  return sql<SqlBool>`(not ${spam} and ${kind} = any(${sql.val(scope.kinds)}::text[]) and (cardinality(${labels}) = 0 or ${labels} && ${sql.val(scope.labels)}::text[]))`;
}
