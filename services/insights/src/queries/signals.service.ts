import { Inject, Injectable } from '@nestjs/common';
import type { Kysely, Selectable } from 'kysely';
import { type ParamsOf, type ResultOf, SignalsList } from '@memex/contracts';
import type { MemexConfig } from '@memex/config';
import { CONFIG, DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import {
  effectiveStatus,
  isPending,
  SIGNAL_KINDS,
  type SignalStatus,
  type StoredSignal,
} from '../domain/engine/index.js';
import { describeSignal } from '../domain/describe.js';
import { DetectionService, type Outcome } from '../commands/detection.service.js';
import type { InsightsDatabase, SignalsTable } from '../projection/schema.js';
import { revealed, toStored, type NoteWords } from '../projection/signal-rows.js';
import { signalVisibleTo } from './signal-access.js';

type SignalView = ResultOf<typeof SignalsList>['signals'][number];
type Counts = ResultOf<typeof SignalsList>['counts'][string];

/** What a listing shows of a signal's notes. */
type ShownNote = NoteWords & { title: string; created_at: Date };

const emptyCounts = (): Counts => ({ new: 0, snoozed: 0, dismissed: 0, minted: 0 });

/** Signals as the caller may see them, detection refreshed first when the notes changed. */
@Injectable()
export class SignalsService {
  constructor(
    @Inject(DATABASE) private readonly db: Kysely<InsightsDatabase>,
    @Inject(CONFIG) private readonly config: MemexConfig,
    private readonly detection: DetectionService,
  ) {}

  @RpcMethod(SignalsList)
  async list(params: ParamsOf<typeof SignalsList>, call: CallContext): Promise<ResultOf<typeof SignalsList>> {
    const outcome = await this.detection.refresh(this.config.rpcTimeoutMs / 2);
    // One snapshot: the signals and whether the run that was still going is merged in them.
    return this.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => this.listIn(trx, params, call, outcome));
  }

  private async listIn(
    db: Kysely<InsightsDatabase>,
    params: ParamsOf<typeof SignalsList>,
    call: CallContext,
    outcome: Outcome,
  ): Promise<ResultOf<typeof SignalsList>> {
    const now = new Date();
    const rows = await db.selectFrom('signals').selectAll().where(signalVisibleTo(call.scope)).execute();
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
    const notes = await this.notesOf(db, page.flatMap(({ signal }) => signal.noteIds));
    return {
      signals: page.map(({ row, signal, status }) => this.view(row, signal, status, notes)),
      counts,
      detection: await this.detection.describe(outcome, call.scope, db),
    };
  }

  private async notesOf(db: Kysely<InsightsDatabase>, ids: string[]): Promise<Map<string, ShownNote>> {
    if (ids.length === 0) return new Map();
    const rows = await db
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
