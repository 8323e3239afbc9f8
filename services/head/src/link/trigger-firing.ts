import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { TriggerFired } from '@memex/contracts';
import { EventPublisher } from '@memex/bus';
import { DATABASE } from '@memex/runtime';
import type { ActiveTrigger } from '../domain/triggers.js';
import type { HeadDatabase } from '../projection/schema.js';
import type { HeadApi } from './head-api.js';

/** One reason a trigger fires: an event of the log, or a commitment that fell due. */
export interface Firing {
  /** The event's id, or `commitment:<id>@<due>`; with the trigger's id, the head's dedupe key. */
  eventId: string;
  /** The log position it fired at (the event's, or the log's end when a commitment fell due). */
  seq: number;
  causationId?: string;
  /** What the workflow is given beside the trigger's own input. */
  subject: Record<string, unknown>;
  /** A notification's message. */
  message: string;
}

/**
 * Fires a trigger at least once and never twice: the head is asked first (with the dedupe key
 * `<trigger>:<event id>`), and `trigger.fired` is logged only after it acknowledged, so a crash
 * between the two asks again with the same key and the head answers "duplicate".
 */
@Injectable()
export class TriggerFiring {
  private readonly firedHere = new Set<string>();

  constructor(
    @Inject(DATABASE) private readonly db: Kysely<HeadDatabase>,
    private readonly publisher: EventPublisher,
  ) {}

  /** The triggers not removed, as the read model has them. */
  async active(): Promise<ActiveTrigger[]> {
    const rows = await this.db.selectFrom('triggers').selectAll().where('removed', '=', false).execute();
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      on: row.on,
      filter: row.filter,
      action: row.action,
      scopeLabels: row.scope_labels,
      fromSeq: Number(row.from_seq),
      registeredAt: row.registered_at ?? new Date(0),
    }));
  }

  async firedBefore(triggerId: string, eventId: string): Promise<boolean> {
    if (this.firedHere.has(`${triggerId}:${eventId}`)) return true;
    const row = await this.db
      .selectFrom('trigger_fires')
      .select('event_id')
      .where('trigger_id', '=', triggerId)
      .where('event_id', '=', eventId)
      .executeTakeFirst();
    return row !== undefined;
  }

  async fire(api: HeadApi, trigger: ActiveTrigger, firing: Firing): Promise<void> {
    const dedupeKey = `${trigger.id}:${firing.eventId}`;
    const labels = trigger.scopeLabels ?? [];
    let runId: string | undefined;
    if ('workflow' in trigger.action) {
      const input = {
        trigger: trigger.name,
        ...firing.subject,
        ...(trigger.action.input !== undefined ? { input: trigger.action.input } : {}),
      };
      const reply = await api.workflowsStart({
        name: trigger.action.workflow,
        input_json: JSON.stringify(input),
        dedupe_key: dedupeKey,
        labels,
      });
      runId = reply.run_id;
    } else {
      await api.notify({
        event: trigger.action.notify,
        title: trigger.name,
        message: firing.message,
        labels,
        dedupe_key: dedupeKey,
      });
    }
    await this.publisher.publish(TriggerFired, {
      subject: `trigger:${trigger.id}`,
      actor: { kind: 'system', id: 'head-link' },
      ...(firing.causationId ? { causation_id: firing.causationId } : {}),
      data: {
        trigger_id: trigger.id,
        event_id: firing.eventId,
        event_seq: firing.seq,
        ...(runId ? { run_id: runId } : {}),
      },
    });
    this.firedHere.add(dedupeKey);
  }
}
