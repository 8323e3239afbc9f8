import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import {
  InferenceMinted,
  InferenceReminted,
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
  formatCitation,
  InferenceValidationError,
  mintInference,
  remintInference,
  transitionSignal,
  type InferenceSource,
  type MintInput,
  type MintedInference,
} from '../domain/engine/index.js';
import type { InsightsDatabase } from '../projection/schema.js';
import { toStored } from '../projection/signal-rows.js';
import { InferencesQueries } from '../queries/inferences.service.js';
import { findSignal } from '../queries/signal-access.js';
import { triageConflict } from './triage.service.js';

/** How often a mint retries when another mint took the id it chose. */
const MINT_ATTEMPTS = 5;

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
    private readonly queries: InferencesQueries,
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
    const [previous] = await this.queries.load(call.scope, params.id);
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
}
