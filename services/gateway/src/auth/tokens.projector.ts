import { Injectable } from '@nestjs/common';
import { sql, type Transaction } from 'kysely';
import { ScopeRulesSet, TokenCreated, TokenRevoked, type EventOf } from '@memex/contracts';
import type { Migration } from '@memex/db';
import { On, Projector } from '@memex/runtime';
import type { GatewayDatabase } from './schema.js';

const migrations: Migration[] = [
  {
    name: '001_tokens',
    async up(db) {
      await db.schema
        .createTable('tokens')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('labels', sql`text[]`, (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addColumn('revoked_at', 'timestamptz')
        .execute();
    },
  },
  {
    name: '002_scope_rules',
    async up(db) {
      await db.schema
        .createTable('scope_rules')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('rules', 'jsonb', (c) => c.notNull())
        .execute();
    },
  },
];

/** Agent tokens, from token.created / token.revoked (the log holds only their hashes), and the scope rules the owner set. */
@Injectable()
@Projector({ name: 'gateway', migrations })
export class TokensProjector {
  @On(TokenCreated)
  async created(trx: Transaction<GatewayDatabase>, event: EventOf<typeof TokenCreated>): Promise<void> {
    const { id, name, labels, sha256 } = event.data;
    await trx
      .insertInto('tokens')
      .values({ id, name, labels, sha256, created_at: new Date(event.recorded_at), revoked_at: null })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
  }

  @On(TokenRevoked)
  async revoked(trx: Transaction<GatewayDatabase>, event: EventOf<typeof TokenRevoked>): Promise<void> {
    await trx
      .updateTable('tokens')
      .set({ revoked_at: new Date(event.recorded_at) })
      .where('id', '=', event.data.id)
      .execute();
  }

  @On(ScopeRulesSet)
  async scopeRulesSet(trx: Transaction<GatewayDatabase>, event: EventOf<typeof ScopeRulesSet>): Promise<void> {
    const rules = JSON.stringify(event.data.rules);
    await trx
      .insertInto('scope_rules')
      .values({ key: 'all', rules })
      .onConflict((oc) => oc.column('key').doUpdateSet({ rules }))
      .execute();
  }
}
