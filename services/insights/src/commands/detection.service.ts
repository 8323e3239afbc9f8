import os from 'node:os';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { SignalsDetected, type DetectedSignal, type ResultOf, type Scope, type SignalsList } from '@memex/contracts';
import { draftOf, EventPublisher, newId } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { visibleTo } from '@memex/db';
import { CONFIG, DATABASE, ServiceHost } from '@memex/runtime';
import type { EngineNote } from '../domain/engine/index.js';
import type { InsightsDatabase } from '../projection/schema.js';
import { detectInWorker } from './detect-worker.js';
import { loadEngineConfig } from './engine-config.js';
import { toEvent } from '../projection/signal-rows.js';

export type Detection = ResultOf<typeof SignalsList>['detection'];
/** What a refresh did: detected, found nothing changed, or is still detecting. */
export type Outcome = 'ran' | 'unchanged' | 'running';

/** How long a run waits for the projector to merge what it published (it may be in the background). */
const MERGE_TIMEOUT_MS = 10 * 60_000;

/** A piece of a detection run stays well under the log's 1 MB message limit. */
const PIECE_BYTES = 512 * 1024;

if (os.endianness() !== 'LE') throw new Error('insights: vectors are read as little-endian float32');

/**
 * The embedding space detection uses: the one covering the most notes, the chosen model
 * (`memex models use`) winning ties, so a newly chosen model takes over once it has caught up.
 */
async function activeSpace(db: Kysely<InsightsDatabase>, chosen: string | null): Promise<string | null> {
  const counts = await db
    .selectFrom('note_vectors')
    .select(['space', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('space')
    .execute();
  counts.sort(
    (a, b) =>
      Number(b.n) - Number(a.n) ||
      (b.space === chosen ? 1 : 0) - (a.space === chosen ? 1 : 0) ||
      (a.space < b.space ? -1 : 1),
  );
  return counts[0]?.space ?? null;
}

/** Float32 vector from bytea (copied: a Buffer's offset need not be 4-aligned). */
function vectorOf(bytes: Buffer | null): Float32Array {
  if (!bytes) return new Float32Array(0);
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
}

/** Cuts a run into pieces of at most PIECE_BYTES of JSON (at least one, possibly empty). */
function pieces(signals: DetectedSignal[]): DetectedSignal[][] {
  const out: DetectedSignal[][] = [[]];
  let bytes = 0;
  for (const signal of signals) {
    const size = JSON.stringify(signal).length;
    if (bytes + size > PIECE_BYTES && out[out.length - 1]!.length > 0) {
      out.push([]);
      bytes = 0;
    }
    out[out.length - 1]!.push(signal);
    bytes += size;
  }
  return out;
}

/**
 * The lazy, dirty-flagged refresh (seed 001 "Lazy by default, no daemon"): every read of signals
 * calls `refresh`, which does nothing when no note changed since the last run (the engine state
 * row's notes_seq against the one the run saw, and the configuration's hash); otherwise it loads
 * the notes, skips detection too when their corpus fingerprint is the last run's, else detects,
 * and publishes `signals.detected` for the projector to merge into the triaged signals.
 */
@Injectable()
export class DetectionService {
  private running: Promise<boolean> | undefined;
  private readonly logger = new Logger('insights:detection');

  constructor(
    @Inject(DATABASE) private readonly db: Kysely<InsightsDatabase>,
    @Inject(CONFIG) private readonly config: MemexConfig,
    private readonly publisher: EventPublisher,
    private readonly host: ServiceHost,
  ) {}

  /**
   * Refreshes the signals, waiting at most `maxWaitMs` (a read answers within the gateway's
   * timeout): `running` when detection goes on past it, to be stored when done. One refresh at a
   * time per process: concurrent reads share it.
   */
  async refresh(maxWaitMs: number): Promise<Outcome> {
    this.running ??= this.run()
      .catch((error: unknown) => {
        this.logger.error(`detection failed: ${(error as Error).message}`);
        throw error;
      })
      .finally(() => (this.running = undefined));
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<Outcome>((resolve) => (timer = setTimeout(() => resolve('running'), maxWaitMs)));
    try {
      return await Promise.race([this.running.then((ran): Outcome => (ran ? 'ran' : 'unchanged')), waited]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async run(): Promise<boolean> {
    const { config: engineConfig, hash } = loadEngineConfig(this.config.home);
    const state = await this.db.selectFrom('engine_state').selectAll().executeTakeFirstOrThrow();
    if (state.detected_notes_seq === state.notes_seq && state.config_hash === hash) {
      return false;
    }
    const corpus = await this.loadNotes();
    const result = await detectInWorker({
      notes: corpus.notes,
      config: engineConfig,
      previousFingerprint: state.fingerprint ?? undefined,
    });
    const run = newId();
    const parts = result.signals ? pieces(result.signals.map(toEvent)) : [undefined];
    const published = await this.publisher.publishAll(
      parts.map((signals, piece) =>
        draftOf(SignalsDetected, {
          subject: `detection:${run}`,
          actor: { kind: 'system', id: 'insights' },
          data: {
            run,
            fingerprint: result.fingerprint,
            notes_seq: corpus.notesSeq,
            config_hash: hash,
            piece,
            pieces: parts.length,
            ...(signals ? { signals } : {}),
          },
        }),
      ),
    );
    await this.host.projector!.waitFor(published[published.length - 1]!.seq, MERGE_TIMEOUT_MS);
    return result.signals !== null;
  }

  /** Every note with its vector in the active space, and the notes_seq they reflect (one snapshot). */
  private async loadNotes(): Promise<{ notes: EngineNote[]; notesSeq: number }> {
    return this.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const state = await trx.selectFrom('engine_state').selectAll().executeTakeFirstOrThrow();
        const space = await activeSpace(trx, state.chosen_space);
        const rows = await trx
          .selectFrom('notes')
          .leftJoin('note_vectors', (join) =>
            join.onRef('note_vectors.note_id', '=', 'notes.id').on('note_vectors.space', '=', space ?? ''),
          )
          .select([
            'id',
            'title',
            'aliases',
            'created_at',
            'updated_at',
            'tags',
            'links',
            'front_matter',
            'content_hash',
            'note_vectors.vector',
          ])
          .execute();
        const notes = rows.map((row): EngineNote => ({
          id: row.id,
          title: row.title,
          aliases: row.aliases,
          createdAt: row.created_at,
          updatedAt: row.updated_at,
          tags: row.tags,
          links: row.links,
          frontMatter: row.front_matter,
          contentHash: row.content_hash,
          embedding: vectorOf(row.vector),
        }));
        return { notes, notesSeq: Number(state.notes_seq) };
      });
  }

  /**
   * What the last run saw, counted within the caller's scope, read from `db` — the snapshot the
   * caller read the signals in, so a run merged after `refresh` stopped waiting (but before the
   * read) is reported as run, not as still running beside its own signals.
   */
  async describe(outcome: Outcome, scope: Scope, db: Kysely<InsightsDatabase> = this.db): Promise<Detection> {
    const state = await db.selectFrom('engine_state').selectAll().executeTakeFirstOrThrow();
    const merged =
      state.detected_notes_seq === state.notes_seq && state.config_hash === loadEngineConfig(this.config.home).hash;
    const running = outcome === 'running' && !merged;
    const space = await activeSpace(db, state.chosen_space);
    const counts = await db
      .selectFrom('notes')
      .leftJoin('note_vectors', (join) =>
        join.onRef('note_vectors.note_id', '=', 'notes.id').on('note_vectors.space', '=', space ?? ''),
      )
      .select((eb) => [
        eb.fn.countAll<number>().as('notes'),
        eb.fn.count<number>('note_vectors.note_id').as('embedded'),
      ])
      .where(visibleTo(scope, { kind: 'notes.kind', labels: 'notes.labels', spam: 'notes.spam' }))
      .executeTakeFirstOrThrow();
    return {
      ran: outcome === 'ran',
      running,
      fingerprint: state.fingerprint,
      detected_at: state.detected_at?.toISOString() ?? null,
      notes: Number(counts.notes),
      unembedded_notes: Number(counts.notes) - Number(counts.embedded),
      space,
    };
  }
}
