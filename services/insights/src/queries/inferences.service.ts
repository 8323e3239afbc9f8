import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely, type SqlBool } from 'kysely';
import { InferencesGet, InferencesList, MemexError, type ParamsOf, type ResultOf, type Scope } from '@memex/contracts';
import { visibleTo } from '@memex/db';
import { DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import { evaluateInference, formatCitation, renderInference, type Inference } from '../domain/engine/index.js';
import type { InsightsDatabase } from '../projection/schema.js';

type InferenceView = ResultOf<typeof InferencesGet>;

/** An inference is visible to a scope when every source note is (as the note is now, or was when deleted). */
function inferenceVisibleTo(scope: Scope) {
  const visible = visibleTo(scope, { kind: 's.kind', labels: 's.labels', spam: 's.spam' });
  return sql<SqlBool>`not exists (select 1 from inference_sources s where s.inference_id = inferences.id
    and not coalesce(${visible}, false))`;
}

/**
 * Inferences as they read now (seed 001 "Invalidation"): each source note's hash now against the
 * one it was minted with.
 */
@Injectable()
export class InferencesQueries {
  constructor(@Inject(DATABASE) private readonly db: Kysely<InsightsDatabase>) {}

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

  /** Inferences in scope (one, or all newest first) with their evidence rows and who minted them. */
  async load(scope: Scope, id?: number): Promise<Array<Inference & { madeBy: string; titles: string[] }>> {
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
