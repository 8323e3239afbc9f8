import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely, type Selectable, type SqlBool } from 'kysely';
import {
  MemexError,
  type ParamsOf,
  type ResultOf,
  type Scope,
  SignalsList,
  SignalsTriage,
  SignalTriaged,
} from '@memex/contracts';
import { EventPublisher } from '@memex/bus';
import { visibleTo } from '@memex/db';
import type { MemexConfig } from '@memex/config';
import { CONFIG, DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import {
  effectiveStatus,
  isPending,
  SIGNAL_KINDS,
  transitionSignal,
  TriageError,
  type SignalStatus,
  type StoredSignal,
  type TriageAction,
} from '../engine/index.js';
import type { InsightsDatabase, SignalsTable } from '../projection/schema.js';
import { describeSignal } from './describe.js';
import { DetectionService } from './detection.service.js';
import { revealed, toStored, type NoteWords } from './signal-rows.js';

type SignalView = ResultOf<typeof SignalsList>['signals'][number];
type Counts = ResultOf<typeof SignalsList>['counts'][string];

/** What a listing shows of a signal's notes. */
type ShownNote = NoteWords & { title: string; created_at: Date };
/**
 * A signal is visible to a scope when every note it cites is (a note that no longer exists is
 * visible to the owner only): its evidence never reveals what the caller may not see.
 */
export function signalVisibleTo(scope: Scope) {
  const visible = visibleTo(scope, { kind: 'n.kind', labels: 'n.labels', spam: 'n.spam' });
  return sql<SqlBool>`not exists (select 1 from unnest(signals.note_ids) as x(id) left join notes n on n.id = x.id
    where not coalesce(${visible}, false))`;
}

/** A signal by its number or key, within the caller's scope (out of scope reads as absent). */
export async function findSignal(
  db: Kysely<InsightsDatabase>,
  ref: string,
  scope: Scope,
): Promise<Selectable<SignalsTable>> {
  const row = await db
    .selectFrom('signals')
    .selectAll()
    .where(/^\d+$/.test(ref) ? sql<SqlBool>`id = ${Number(ref)}` : sql<SqlBool>`key = ${ref}`)
    .where(signalVisibleTo(scope))
    .executeTakeFirst();
  if (!row) throw new MemexError('not_found', `no signal ${ref}`);
  return row;
}

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

const emptyCounts = (): Counts => ({ new: 0, snoozed: 0, dismissed: 0, minted: 0 });

@Injectable()
export class SignalsService {
  constructor(
    @Inject(DATABASE) private readonly db: Kysely<InsightsDatabase>,
    @Inject(CONFIG) private readonly config: MemexConfig,
    private readonly detection: DetectionService,
    private readonly publisher: EventPublisher,
  ) {}

  @RpcMethod(SignalsList)
  async list(params: ParamsOf<typeof SignalsList>, call: CallContext): Promise<ResultOf<typeof SignalsList>> {
    const outcome = await this.detection.refresh(this.config.rpcTimeoutMs / 2);
    const now = new Date();
    const rows = await this.db.selectFrom('signals').selectAll().where(signalVisibleTo(call.scope)).execute();
    const counts: Record<string, Counts> = Object.fromEntries(SIGNAL_KINDS.map((kind) => [kind, emptyCounts()]));
    const wanted = params.status ?? 'pending';
    const chosen: Array<{ row: Selectable<SignalsTable>; signal: StoredSignal; status: SignalStatus }> = [];
    for (const row of rows) {
      const signal = toStored(row);
      const status = effectiveStatus(signal, now);
      if (signal.present) counts[signal.kind]![status]++;
      if (params.kinds && !params.kinds.includes(signal.kind)) continue;
      const keep = wanted === 'pending' ? isPending(signal, now) : wanted === 'all' || wanted === status;
      if (keep) chosen.push({ row, signal, status });
    }
    // Most worth a look first; judged and vanished ones after.
    chosen.sort(
      (a, b) =>
        Number(b.signal.present) - Number(a.signal.present) || b.signal.score - a.signal.score || a.row.id - b.row.id,
    );
    const page = chosen.slice(0, params.limit ?? 100);
    const notes = await this.notesOf(page.flatMap(({ signal }) => signal.noteIds));
    return {
      signals: page.map(({ row, signal, status }) => this.view(row, signal, status, notes)),
      counts,
      detection: await this.detection.describe(outcome, call.scope),
    };
  }

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

  private async notesOf(ids: string[]): Promise<Map<string, ShownNote>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('notes')
      .select(['id', 'title', 'created_at', 'tags', 'links'])
      .where('id', 'in', [...new Set(ids)])
      .execute();
    return new Map(rows.map((row) => [row.id, row]));
  }

  private view(
    row: Selectable<SignalsTable>,
    stored: StoredSignal,
    status: SignalStatus,
    notes: Map<string, ShownNote>,
  ): SignalView {
    const signal = revealed(stored, (id) => notes.get(id));
    return {
      id: row.id,
      key: signal.key,
      kind: signal.kind,
      status,
      snoozed_until: status === 'snoozed' ? (signal.snoozedUntil?.toISOString() ?? null) : null,
      text: describeSignal(signal, (id) => notes.get(id)?.title ?? `(deleted note ${id})`),
      score: signal.score,
      notes: signal.noteIds.flatMap((id) => {
        const note = notes.get(id);
        return note ? [{ id, title: note.title, created_at: note.created_at.toISOString() }] : [];
      }),
      detail: signal.detail as unknown as Record<string, unknown>,
      present: signal.present,
      first_detected_at: signal.firstDetectedAt.toISOString(),
      status_changed_at: signal.statusChangedAt?.toISOString() ?? null,
      inference_id: signal.inferenceId,
      inherited_from: signal.inheritedFrom,
    };
  }
}
