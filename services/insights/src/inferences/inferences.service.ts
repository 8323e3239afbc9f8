import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely, type SqlBool } from 'kysely';
import {
  InferenceMinted,
  InferenceReminted,
  InferencesGet,
  InferencesList,
  InferencesMint,
  InferencesRemint,
  MemexError,
  type ParamsOf,
  type ResultOf,
  type Scope,
} from '@memex/contracts';
import { EventPublisher } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { visibleTo } from '@memex/db';
import { CONFIG, DATABASE, RpcMethod, ServiceHost, type CallContext } from '@memex/runtime';
import {
  evaluateInference,
  formatCitation,
  InferenceValidationError,
  mintInference,
  remintInference,
  renderInference,
  transitionSignal,
  type Inference,
  type InferenceSource,
  type MintInput,
  type MintedInference,
} from '../engine/index.js';
import type { InsightsDatabase } from '../projection/schema.js';
import { findSignal, triageConflict } from '../signals/signals.service.js';
import { toStored } from '../signals/signal-rows.js';

type InferenceView = ResultOf<typeof InferencesGet>;

/** How often a mint retries when another mint took the id it chose. */
const MINT_ATTEMPTS = 5;

/** An inference is visible to a scope when every source note is (as the note is now, or was when deleted). */
function inferenceVisibleTo(scope: Scope) {
  const visible = visibleTo(scope, { kind: 's.kind', labels: 's.labels', spam: 's.spam' });
  return sql<SqlBool>`not exists (select 1 from inference_sources s where s.inference_id = inferences.id
    and not coalesce(${visible}, false))`;
}

function validated<T>(make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (error instanceof InferenceValidationError) throw new MemexError('invalid_params', error.message);
    throw error;
  }
}

/**
 * Inferences (seed 001 "Inferences", "Invalidation"): minted with the content hash of every
 * source note, and re-hashed on every read. Ids are small integers in minting order: the mint
 * claims `inference:<n>` in the log (expected-last-subject-sequence 0), so the log decides.
 */
@Injectable()
export class InferencesService {
  constructor(
    @Inject(DATABASE) private readonly db: Kysely<InsightsDatabase>,
    @Inject(CONFIG) private readonly config: MemexConfig,
    private readonly publisher: EventPublisher,
    private readonly host: ServiceHost,
  ) {}

  @RpcMethod(InferencesMint)
  async mint(params: ParamsOf<typeof InferencesMint>, call: CallContext): Promise<ResultOf<typeof InferencesMint>> {
    await this.caughtUp();
    const signal = params.signal ? await findSignal(this.db, params.signal, call.scope) : undefined;
    if (signal) {
      // Refused now rather than ignored later: a dismissed or already minted signal is not minted again.
      try {
        transitionSignal(toStored(signal), { type: 'mint', inferenceId: 1 }, new Date());
      } catch (error) {
        triageConflict(error);
      }
    }
    const noteIds = params.sources ?? signal?.note_ids;
    if (!noteIds)
      throw new MemexError('invalid_params', 'give the source notes (sources) or the signal they come from');
    const input: MintInput = {
      title: params.title,
      summary: params.summary,
      confidence: params.confidence,
      modelId: params.model_id,
      sources: await this.snapshot(noteIds, call.scope),
      signalKey: signal?.key ?? null,
    };
    const minted = validated(() => mintInference(input, new Date()));
    for (let attempt = 1; ; attempt++) {
      if (attempt > 1) await this.caughtUp();
      const last = await this.db
        .selectFrom('inferences')
        .select((eb) => eb.fn.max('id').as('id'))
        .executeTakeFirst();
      const id = (last?.id ?? 0) + 1;
      try {
        const { seq } = await this.publisher.publish(InferenceMinted, {
          subject: `inference:${id}`,
          actor: call.caller,
          expectFirst: true,
          data: { id, ...this.synthesis(minted), signal_key: minted.signalKey },
        });
        return { id, citation: formatCitation({ ...minted, id }), seq };
      } catch (error) {
        if (!(error instanceof MemexError && error.code === 'conflict') || attempt === MINT_ATTEMPTS) throw error;
      }
    }
  }

  @RpcMethod(InferencesRemint)
  async remint(
    params: ParamsOf<typeof InferencesRemint>,
    call: CallContext,
  ): Promise<ResultOf<typeof InferencesRemint>> {
    await this.caughtUp();
    const [previous] = await this.load(call.scope, params.id);
    if (!previous) throw new MemexError('not_found', `no inference #${params.id}`);
    const input: MintInput = {
      title: params.title ?? previous.title,
      summary: params.summary ?? previous.summary,
      confidence: params.confidence ?? previous.confidence,
      modelId: params.model_id ?? previous.modelId,
      sources: await this.snapshot(params.sources ?? previous.sources.map((s) => s.noteId), call.scope),
    };
    const reminted = validated(() => remintInference(previous, input, new Date()));
    const { seq } = await this.publisher.publish(InferenceReminted, {
      subject: `inference:${previous.id}`,
      actor: call.caller,
      data: { id: previous.id, ...this.synthesis(reminted) },
    });
    return { id: previous.id, revision: reminted.revision, citation: formatCitation(reminted), seq };
  }

  @RpcMethod(InferencesList)
  async list(params: ParamsOf<typeof InferencesList>, call: CallContext): Promise<ResultOf<typeof InferencesList>> {
    const views = await this.views(await this.load(call.scope));
    const wanted = params.status;
    return {
      inferences: views
        .filter((v) => !wanted || v.status === wanted || (wanted === 'flagged' && v.status !== 'active'))
        .slice(0, params.limit ?? 100),
    };
  }

  @RpcMethod(InferencesGet)
  async get(params: ParamsOf<typeof InferencesGet>, call: CallContext): Promise<ResultOf<typeof InferencesGet>> {
    const [view] = await this.views(await this.load(call.scope, params.id));
    if (!view) throw new MemexError('not_found', `no inference #${params.id}`);
    return view;
  }

  /**
   * Mints decide from the read model (which notes exist, their hashes, the last id): let it apply
   * the whole log first, so a note written just before is there to cite.
   */
  private async caughtUp(): Promise<void> {
    await this.host.projector!.caughtUp(this.config.minSeqTimeoutMs);
  }

  /** The notes' content hashes now, in the order given; a note the caller cannot see reads as absent. */
  private async snapshot(noteIds: string[], scope: Scope): Promise<InferenceSource[]> {
    const rows = await this.db
      .selectFrom('notes')
      .select(['id', 'content_hash'])
      .where('id', 'in', noteIds)
      .where(visibleTo(scope))
      .execute();
    const hashes = new Map(rows.map((row) => [row.id, row.content_hash]));
    const missing = noteIds.filter((id) => !hashes.has(id));
    if (missing.length > 0) {
      throw new MemexError(
        'not_found',
        `no note ${missing.join(', ')} (sources must be notes or Markdown documents that exist now)`,
      );
    }
    return noteIds.map((noteId) => ({ noteId, contentHash: hashes.get(noteId)! }));
  }

  private synthesis(minted: MintedInference) {
    return {
      title: minted.title,
      summary: minted.summary,
      confidence: minted.confidence,
      model_id: minted.modelId,
      sources: minted.sources.map((s) => ({ note_id: s.noteId, content_hash: s.contentHash })),
    };
  }

  /** Inferences in scope (one, or all newest first) with their evidence rows and who minted them. */
  private async load(scope: Scope, id?: number): Promise<Array<Inference & { madeBy: string; titles: string[] }>> {
    let query = this.db.selectFrom('inferences').selectAll().where(inferenceVisibleTo(scope)).orderBy('id', 'desc');
    if (id !== undefined) query = query.where('id', '=', id);
    const rows = await query.execute();
    if (rows.length === 0) return [];
    const sources = await this.db
      .selectFrom('inference_sources')
      .selectAll()
      .where(
        'inference_id',
        'in',
        rows.map((r) => r.id),
      )
      .orderBy('inference_id')
      .orderBy('ordinal')
      .execute();
    return rows.map((row) => {
      const own = sources.filter((s) => s.inference_id === row.id);
      return {
        id: row.id,
        title: row.title,
        summary: row.summary,
        confidence: row.confidence,
        modelId: row.model_id,
        sources: own.map((s) => ({ noteId: s.note_id, contentHash: s.content_hash })),
        titles: own.map((s) => s.title),
        signalKey: row.signal_key,
        mintedAt: row.minted_at,
        revision: row.revision,
        madeBy: row.made_by,
      };
    });
  }

  /** Invalidation on read: each source's hash now against its snapshot. */
  private async views(inferences: Array<Inference & { madeBy: string; titles: string[] }>): Promise<InferenceView[]> {
    const ids = [...new Set(inferences.flatMap((inf) => inf.sources.map((s) => s.noteId)))];
    const rows =
      ids.length === 0
        ? []
        : await this.db.selectFrom('notes').select(['id', 'content_hash']).where('id', 'in', ids).execute();
    const current = new Map(rows.map((row) => [row.id, row.content_hash]));
    return inferences.map((inf) => {
      const evaluation = evaluateInference(inf, current);
      return {
        id: inf.id,
        title: inf.title,
        summary: inf.summary,
        confidence: inf.confidence,
        model_id: inf.modelId,
        status: evaluation.status,
        sources: evaluation.sources.map((s, i) => ({
          note_id: s.noteId,
          title: inf.titles[i] ?? '',
          mark: s.mark,
          snapshot_hash: s.snapshotHash,
          current_hash: s.currentHash,
        })),
        signal_key: inf.signalKey,
        made_by: inf.madeBy,
        minted_at: inf.mintedAt.toISOString(),
        revision: inf.revision,
        citation: formatCitation(inf, evaluation),
        card: renderInference(inf, evaluation),
      };
    });
  }
}
