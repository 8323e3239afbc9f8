import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { MemexError, type ParamsOf, type ResultOf, SignalsTriage, SignalTriaged } from '@memex/contracts';
import { EventPublisher } from '@memex/bus';
import { DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import { transitionSignal, TriageError, type StoredSignal, type TriageAction } from '../domain/engine/index.js';
import type { InsightsDatabase } from '../projection/schema.js';
import { toStored } from '../projection/signal-rows.js';
import { findSignal } from '../queries/signal-access.js';

/** A triage error is the caller's: the signal is not in a state that allows the move. */
export function triageConflict(error: unknown): never {
  if (error instanceof TriageError) throw new MemexError('conflict', error.message);
  throw error;
}

/** An ISO date or date-time; a bare date means its start (UTC). */
function parseUntil(until: string | undefined): Date {
  const date = until ? new Date(until) : undefined;
  if (!date || Number.isNaN(date.getTime())) {
    throw new MemexError(
      'invalid_params',
      `snooze needs until, an ISO date or date-time (got ${JSON.stringify(until)})`,
    );
  }
  return date;
}

/** Triage of a signal (dismiss, snooze, reopen): a signal.triaged event, applied by the projector. */
@Injectable()
export class TriageService {
  constructor(
    @Inject(DATABASE) private readonly db: Kysely<InsightsDatabase>,
    private readonly publisher: EventPublisher,
  ) {}

  @RpcMethod(SignalsTriage)
  async triage(params: ParamsOf<typeof SignalsTriage>, call: CallContext): Promise<ResultOf<typeof SignalsTriage>> {
    const row = await findSignal(this.db, params.signal, call.scope);
    const action: TriageAction =
      params.action === 'snooze' ? { type: 'snooze', until: parseUntil(params.until) } : { type: params.action };
    let after: StoredSignal;
    try {
      after = transitionSignal(toStored(row), action, new Date());
    } catch (error) {
      triageConflict(error);
    }
    const { seq } = await this.publisher.publish(SignalTriaged, {
      subject: `signal:${row.key}`,
      actor: call.caller,
      data: {
        key: row.key,
        action: params.action,
        ...(action.type === 'snooze' ? { until: action.until.toISOString() } : {}),
      },
    });
    return { id: row.id, key: row.key, status: after.status, seq };
  }
}
