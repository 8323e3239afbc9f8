import { once } from 'node:events';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import {
  isEventOf,
  ItemIngested,
  ScopeRulesSet,
  TriggerRegistered,
  TriggerRemoved,
  type EventEnvelope,
} from '@memex/contracts';
import { readLog, type Bus } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { BUS, CONFIG, DATABASE, ServiceHost, scopeRulesInForce, type HealthProblems } from '@memex/runtime';
import { fires, thingsChanged, type ActiveTrigger } from '../domain/triggers.js';
import type { HeadDatabase } from '../projection/schema.js';
import { HeadLinkService } from './head-link.service.js';
import type { HeadApi } from './head-api.js';
import { TriggerFiring } from './trigger-firing.js';

const CURSOR_SAVE_EVERY = 500;
const RETRY_MS = 1000;

/**
 * Evaluates the head's triggers on the log (seed §3.2) and starts their workflows or sends their
 * notifications, at least once per matching event: a fire is recorded on the log (trigger.fired)
 * only after the head acknowledged it, and the event id goes to the head as its dedupe key, so a
 * crash between the two starts nothing twice. It reads from where it stopped, and waits while the
 * head is away.
 */
@Injectable()
export class TriggerEvaluator implements OnApplicationBootstrap, OnApplicationShutdown, HealthProblems {
  private readonly logger = new Logger('memex:triggers');
  private readonly home: string;
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  /** Why evaluation stopped, until a trigger fires again. */
  private paused: string | undefined;

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(DATABASE) private readonly db: Kysely<HeadDatabase>,
    @Inject(CONFIG) config: MemexConfig,
    private readonly firing: TriggerFiring,
    private readonly link: HeadLinkService,
    private readonly host: ServiceHost,
  ) {
    this.home = config.home;
  }

  onApplicationBootstrap(): void {
    this.loop = this.run();
  }

  async onApplicationShutdown(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.abort.signal.aborted) {
      try {
        await this.pass();
      } catch (error) {
        if (this.abort.signal.aborted) return;
        this.paused = (error as Error).message;
        this.logger.warn(`trigger evaluation paused: ${this.paused}`);
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }

  /** Reads the log from the cursor, following it, until the head is lost or the service stops. */
  private async pass(): Promise<void> {
    const api = this.link.api ?? (await this.connected());
    if (!api) return;
    // Every trigger registered up to `seen` is in the read model once the projector is there;
    // any later one is met in the log below, at its place.
    const seen = await this.bus.lastSeq();
    await this.host.projector?.waitFor(seen, 30_000);
    const triggers = new Map((await this.firing.active()).map((t) => [t.id, t]));
    let cursor = await this.startSeq([...triggers.values()], seen);
    let sinceSave = 0;
    let rules = await scopeRulesInForce(this.bus, this.home);
    for await (const { seq, event } of readLog(this.bus, { fromSeq: cursor + 1, signal: this.abort.signal })) {
      // New scope rules apply from their place in the log on.
      if (isEventOf(ScopeRulesSet, event)) rules = event.data.rules;
      this.track(triggers, seq, event);
      for (const trigger of triggers.values()) {
        if (fires(trigger, seq, event, rules) && !(await this.firing.firedBefore(trigger.id, event.id))) {
          await this.fire(api, trigger, seq, event);
        }
      }
      cursor = seq;
      if (++sinceSave >= CURSOR_SAVE_EVERY) {
        await this.saveCursor(cursor);
        sinceSave = 0;
      }
    }
    await this.saveCursor(cursor);
  }

  private async connected(): Promise<HeadApi | undefined> {
    const [api] = (await once(this.link.events, 'connected', { signal: this.abort.signal }).catch(() => [
      undefined,
    ])) as [HeadApi | undefined];
    return api;
  }

  /** Triggers registered or removed while reading take effect at their place in the log. */
  private track(triggers: Map<string, ActiveTrigger>, seq: number, event: EventEnvelope): void {
    if (isEventOf(TriggerRegistered, event)) {
      const { id, name, on, filter, action, scope_labels, from_seq } = event.data;
      triggers.set(id, {
        id,
        name,
        on,
        filter,
        action,
        scopeLabels: scope_labels,
        fromSeq: Math.max(from_seq, seq),
        registeredAt: new Date(event.recorded_at),
      });
    } else if (isEventOf(TriggerRemoved, event)) {
      triggers.delete(event.data.id);
    }
  }

  private async fire(api: HeadApi, trigger: ActiveTrigger, seq: number, event: EventEnvelope): Promise<void> {
    // fires() passes item.ingested events, and graph events for entity.changed.
    const item = isEventOf(ItemIngested, event) ? event.data : undefined;
    const things = trigger.on === 'entity.changed' ? thingsChanged(event) : undefined;
    await this.firing.fire(api, trigger, {
      eventId: event.id,
      seq,
      causationId: event.id,
      subject: {
        event: event.type,
        seq,
        item: item?.id,
        kind: item?.kind,
        title: item?.title,
        ...(things ? { things } : {}),
      },
      message: item?.title ?? (things ? `changed: ${things.join(', ')}` : event.type),
    });
    this.paused = undefined;
  }

  async healthProblems(): Promise<string[]> {
    return this.paused ? [`triggers paused: ${this.paused}`] : [];
  }

  /**
   * Where to read from: the saved cursor, or else (a rebuilt schema) each trigger's registration
   * or last fire, whichever is later, the earliest of them; with no trigger yet, where the read
   * model was known complete.
   */
  private async startSeq(triggers: ActiveTrigger[], seen: number): Promise<number> {
    const saved = await this.db.selectFrom('trigger_cursor').select('seq').where('id', '=', 1).executeTakeFirst();
    if (saved) return Number(saved.seq);
    if (triggers.length === 0) return seen;
    const fires = await this.db
      .selectFrom('trigger_fires')
      .select(['trigger_id', sql<string>`max(event_seq)`.as('last')])
      .groupBy('trigger_id')
      .execute();
    const last = new Map(fires.map((row) => [row.trigger_id, Number(row.last)]));
    return Math.min(...triggers.map((t) => Math.max(t.fromSeq, last.get(t.id) ?? 0)));
  }

  private async saveCursor(seq: number): Promise<void> {
    await this.db
      .insertInto('trigger_cursor')
      .values({ id: 1, seq })
      .onConflict((oc) => oc.column('id').doUpdateSet({ seq }))
      .execute();
  }
}
