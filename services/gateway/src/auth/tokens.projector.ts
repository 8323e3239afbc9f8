import { Injectable } from '@nestjs/common';
import { sql, type Transaction } from 'kysely';
import type { EventOf, TokenCreated, TokenRevoked } from '@memex/contracts';
import type { LoggedEvent } from '@memex/bus';
import type { Migration } from '@memex/db';
import { Projector, type Projection } from '@memex/runtime';
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
];

/** Agent tokens, from token.created / token.revoked (the log holds only their hashes). */
@Injectable()
@Projector({ name: 'gateway', migrations, filter: 'memex.evt.token.>' })
export class TokensProjector implements Projection {
  async apply(trx: Transaction<GatewayDatabase>, { event }: LoggedEvent): Promise<void> {
    if (event.type === 'token.created') {
      const { id, name, labels, sha256 } = (event as EventOf<typeof TokenCreated>).data;
      await trx
        .insertInto('tokens')
        .values({ id, name, labels, sha256, created_at: new Date(event.recorded_at), revoked_at: null })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    } else if (event.type === 'token.revoked') {
      const { id } = (event as EventOf<typeof TokenRevoked>).data;
      await trx
        .updateTable('tokens')
        .set({ revoked_at: new Date(event.recorded_at) })
        .where('id', '=', id)
        .execute();
    }
  }
}
