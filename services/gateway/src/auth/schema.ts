import type { ColumnType } from 'kysely';
import type { ScopeRule } from '@memex/contracts';

export interface TokensTable {
  id: string;
  name: string;
  labels: string[];
  sha256: string;
  created_at: Date;
  revoked_at: Date | null;
}

/** The scope rules the owner set last (one row, `all`); absent until memex.scopes.set is first used. */
export interface ScopeRulesTable {
  key: 'all';
  rules: ColumnType<ScopeRule[], string, string>;
}

export interface GatewayDatabase {
  tokens: TokensTable;
  scope_rules: ScopeRulesTable;
}
