import { Injectable } from '@nestjs/common';
import { sql, type Transaction } from 'kysely';
import { TriggerFired, TriggerRegistered, TriggerRemoved, type EventOf } from '@memex/contracts';
import type { Migration } from '@memex/db';
import { On, Projector } from '@memex/runtime';
import type { HeadDatabase } from './schema.js';

const migrations: Migration[] = [
  {
    name: '001_triggers',
    async up(db) {
      await db.schema
        .createTable('triggers')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('on', 'text', (c) => c.notNull())
        .addColumn('filter', 'jsonb', (c) => c.notNull())
        .addColumn('action', 'jsonb', (c) => c.notNull())
        .addColumn('scope_labels', sql`text[]`)
        .addColumn('from_seq', 'bigint', (c) => c.notNull())
        .addColumn('removed', 'boolean', (c) => c.notNull().defaultTo(false))
        .execute();
      await db.schema
        .createTable('trigger_fires')
        .addColumn('trigger_id', 'text', (c) => c.notNull())
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('event_seq', 'bigint', (c) => c.notNull())
        .addColumn('fired_at', 'timestamptz', (c) => c.notNull())
        .addPrimaryKeyConstraint('trigger_fires_pk', ['trigger_id', 'event_id'])
        .execute();
      // Written by the trigger evaluator, not the projector: how far it has read the log. A
      // rebuilt schema starts without it, and the evaluator re-reads from its triggers' last
      // fires; trigger_fires keeps that from firing anything twice.
      await db.schema
        .createTable('trigger_cursor')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  {
    // commitment.due fires for what falls due after a trigger was registered, not the past's backlog.
    name: '002_trigger_registered_at',
    async up(db) {
      await db.schema.alterTable('triggers').addColumn('registered_at', 'timestamptz').execute();
    },
  },
];

/** Triggers the head registered and what they fired for. */
@Injectable()
@Projector({ name: 'head', migrations })
export class HeadProjector {
  @On(TriggerRegistered)
  async registered(trx: Transaction<HeadDatabase>, event: EventOf<typeof TriggerRegistered>): Promise<void> {
    const { id, name, on, filter, action, scope_labels, from_seq } = event.data;
    await trx
      .insertInto('triggers')
      .values({
        id,
        name,
        on,
        filter: JSON.stringify(filter),
        action: JSON.stringify(action),
        scope_labels,
        from_seq,
        registered_at: new Date(event.recorded_at),
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
  }

  @On(TriggerRemoved)
  async removed(trx: Transaction<HeadDatabase>, event: EventOf<typeof TriggerRemoved>): Promise<void> {
    await trx.updateTable('triggers').set({ removed: true }).where('id', '=', event.data.id).execute();
  }

  @On(TriggerFired)
  async fired(trx: Transaction<HeadDatabase>, event: EventOf<typeof TriggerFired>): Promise<void> {
    const { trigger_id, event_id, event_seq } = event.data;
    await trx
      .insertInto('trigger_fires')
      .values({ trigger_id, event_id, event_seq, fired_at: new Date(event.recorded_at) })
      .onConflict((oc) => oc.columns(['trigger_id', 'event_id']).doNothing())
      .execute();
  }
}
