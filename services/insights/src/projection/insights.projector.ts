import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable, Logger } from '@nestjs/common';
import { sql, type Transaction } from 'kysely';
import {
  EmbeddingComputed,
  InferenceMinted,
  InferenceReminted,
  ItemDeleted,
  ItemIngested,
  ModelActivated,
  NotePut,
  SignalsDetected,
  SignalTriaged,
  type DetectedSignal,
  type EventOf,
} from '@memex/contracts';
import { On, OnBatch, Projector, type AroundBatch, type LoggedOf } from '@memex/runtime';
import {
  applyDetection,
  transitionSignal,
  TriageError,
  type StoredSignal,
  type TriageAction,
} from '../domain/engine/index.js';
import { markdownDocumentFacts, notePutFacts, type NoteFacts, type PreviousVersion } from '../domain/note-facts.js';
import { fromEvent, toRow, toStored } from './signal-rows.js';
import { insightsMigrations } from './migrations.js';
import type { InsightsDatabase } from './schema.js';

type Trx = Transaction<InsightsDatabase>;

/** The dirty flag of a batch: the last event in it that changed what detection reads. */
interface Dirty {
  notesSeq: number | null;
}

/**
 * Builds the insights read model from the log: notes from `note.put` and Markdown documents, their
 * item-level vectors from `embedding.computed`, signals merged from `signals.detected` runs and
 * judged by `signal.triaged`, inferences from `inference.minted`/`reminted`. Detection and triage
 * are the engine's pure functions applied with the events' own times, so a replay rebuilds the
 * same rows; an illegal triage (a race lost to an earlier judgement) is ignored, as the log
 * ordered it after the judgement that won.
 */
@Injectable()
@Projector({ name: 'insights', migrations: insightsMigrations })
export class InsightsProjector implements AroundBatch<Trx> {
  private readonly logger = new Logger('insights:projector');

  private readonly batchDirty = new AsyncLocalStorage<Dirty>();

  /** The events in order; the dirty flag (notes_seq) is written once, at the end. */
  async aroundBatch(trx: Trx, apply: () => Promise<void>): Promise<void> {
    const dirty: Dirty = { notesSeq: null };
    await this.batchDirty.run(dirty, apply);
    if (dirty.notesSeq !== null) await trx.updateTable('engine_state').set({ notes_seq: dirty.notesSeq }).execute();
  }

  /** This batch's dirty flag (a replay's batches run beside the live projector's). */
  private get dirty(): Dirty {
    return this.batchDirty.getStore()!;
  }

  @On(NotePut)
  async notePut(trx: Trx, event: EventOf<typeof NotePut>, seq: number): Promise<void> {
    await this.putNote(trx, seq, this.dirty, event.data.id, (previous) => notePutFacts(event, seq, previous));
  }

  /**
   * An import is thousands of mails and their embeddings in a row, of which only Markdown
   * documents and their notes' vectors matter here: a run is applied in order, the vectors of
   * the mails between two documents looked up against the notes with one statement.
   */
  @OnBatch(ItemIngested, EmbeddingComputed)
  async itemsAndEmbeddings(trx: Trx, run: LoggedOf<typeof ItemIngested | typeof EmbeddingComputed>[]): Promise<void> {
    let vectors: LoggedOf<typeof EmbeddingComputed>[] = [];
    for (const logged of run) {
      if (logged.event.type === EmbeddingComputed.type) {
        const { piece, item } = (logged as LoggedOf<typeof EmbeddingComputed>).event.data;
        // Only the item-level vector (piece 0) is kept.
        if (piece === 0 && item) vectors.push(logged as LoggedOf<typeof EmbeddingComputed>);
        continue;
      }
      const { event, seq } = logged as LoggedOf<typeof ItemIngested>;
      // Only a document can be (or have been) a Markdown note: the rest of the items cost nothing here.
      if (event.data.kind !== 'document') continue;
      // The vectors before it are of the notes as they were before it.
      await this.storeVectors(trx, vectors);
      vectors = [];
      await this.putNote(trx, seq, this.dirty, event.data.id, (previous) => markdownDocumentFacts(event, previous));
    }
    await this.storeVectors(trx, vectors);
  }

  @On(ItemDeleted)
  async itemDeleted(trx: Trx, event: EventOf<typeof ItemDeleted>, seq: number): Promise<void> {
    await this.deleteItem(trx, seq, this.dirty, event.data.id);
  }

  @On(ModelActivated)
  async modelActivated(trx: Trx, event: EventOf<typeof ModelActivated>, seq: number): Promise<void> {
    await trx.updateTable('engine_state').set({ chosen_space: event.data.space }).execute();
    this.dirty.notesSeq = seq;
  }

  /** Inserts or replaces a note (`facts` null: the item is not a note, or no longer Markdown). */
  private async putNote(
    trx: Trx,
    seq: number,
    dirty: Dirty,
    id: string,
    facts: (previous: PreviousVersion | undefined) => NoteFacts | null,
  ): Promise<void> {
    const { rows } = await sql<{ deleted: boolean; created_at: Date | null; revision: number | null }>`
      select exists (select 1 from tombstones where id = ${id}) as deleted, n.created_at, n.revision
      from (select 1) one left join notes n on n.id = ${id}`.execute(trx);
    const { deleted, created_at, revision } = rows[0]!;
    if (deleted) return;
    const previous = created_at ? { created_at } : undefined;
    const note = facts(previous);
    if (!note) {
      if (previous) await this.dropNote(trx, seq, dirty, id);
      return;
    }
    const row = { ...note, front_matter: JSON.stringify(note.front_matter), seq };
    const { id: _id, ...update } = row;
    await trx
      .insertInto('notes')
      .values(row)
      .onConflict((oc) => oc.column('id').doUpdateSet(update))
      .execute();
    dirty.notesSeq = seq;
    if (!previous) return;
    // A new revision's content is not what the old vectors describe; its own come with its embedding.
    if (Number(revision) !== note.revision) await trx.deleteFrom('note_vectors').where('note_id', '=', id).execute();
    await trx
      .updateTable('inference_sources')
      .set({ title: note.title, kind: note.kind, labels: note.labels, spam: note.spam })
      .where('note_id', '=', id)
      .execute();
  }

  /** Item-level vectors (piece 0), in order, each kept if it is of its note's current revision (older revisions' are stale). */
  private async storeVectors(trx: Trx, vectors: LoggedOf<typeof EmbeddingComputed>[]): Promise<void> {
    if (vectors.length === 0) return;
    const ids = [...new Set(vectors.map(({ event }) => event.data.item_id))];
    const notes = await trx
      .selectFrom('notes')
      .select(['id', 'revision'])
      .where(sql<boolean>`id = any(${ids}::text[])`)
      .execute();
    const revisions = new Map(notes.map((note) => [note.id, Number(note.revision)]));
    for (const { event, seq } of vectors) {
      const { item_id, revision, space, dims, item } = event.data;
      if (revisions.get(item_id) !== revision) continue;
      const vector = Buffer.from(item!, 'base64');
      if (vector.length !== dims * 4) {
        throw new Error(
          `embedding.computed for ${item_id}: a ${dims}-d vector has ${dims * 4} bytes, not ${vector.length}`,
        );
      }
      await trx
        .insertInto('note_vectors')
        .values({ note_id: item_id, space, vector })
        .onConflict((oc) => oc.columns(['note_id', 'space']).doUpdateSet({ vector }))
        .execute();
      this.dirty.notesSeq = seq;
    }
  }

  /** The note goes; inference evidence citing it stays (that is how an inference is seen orphaned). */
  private async deleteItem(trx: Trx, seq: number, dirty: Dirty, id: string): Promise<void> {
    await trx
      .insertInto('tombstones')
      .values({ id })
      .onConflict((oc) => oc.doNothing())
      .execute();
    if (await trx.selectFrom('notes').select('id').where('id', '=', id).executeTakeFirst()) {
      await this.dropNote(trx, seq, dirty, id);
    }
  }

  private async dropNote(trx: Trx, seq: number, dirty: Dirty, id: string): Promise<void> {
    await trx.deleteFrom('notes').where('id', '=', id).execute();
    await trx.deleteFrom('note_vectors').where('note_id', '=', id).execute();
    dirty.notesSeq = seq;
  }

  @On(SignalsDetected)
  async signalsDetected(trx: Trx, event: EventOf<typeof SignalsDetected>): Promise<void> {
    const { run, piece, pieces, fingerprint, notes_seq, config_hash } = event.data;
    let detected: DetectedSignal[] | undefined = event.data.signals;
    if (pieces > 1) {
      await trx
        .insertInto('detection_pieces')
        .values({ run, piece, signals: JSON.stringify(detected ?? []) })
        .onConflict((oc) => oc.columns(['run', 'piece']).doNothing())
        .execute();
      const stored = await trx
        .selectFrom('detection_pieces')
        .select('signals')
        .where('run', '=', run)
        .orderBy('piece')
        .execute();
      if (stored.length < pieces) return;
      detected = stored.flatMap((row) => row.signals as DetectedSignal[]);
      await trx.deleteFrom('detection_pieces').where('run', '=', run).execute();
    }
    const detectedAt = new Date(event.occurred_at);
    if (detected) await this.mergeDetection(trx, detected, detectedAt);
    await trx
      .updateTable('engine_state')
      .set({ fingerprint, detected_notes_seq: notes_seq, config_hash, detected_at: detectedAt })
      .execute();
  }

  /** The engine's merge: judged signals keep their status, vanished ones stay (not present), new ones get the next numbers. */
  private async mergeDetection(trx: Trx, detected: DetectedSignal[], detectedAt: Date): Promise<void> {
    const rows = await trx.selectFrom('signals').selectAll().execute();
    const ids = new Map(rows.map((row) => [row.key, row.id]));
    let nextId = Math.max(0, ...rows.map((row) => row.id)) + 1;
    const { upserts } = applyDetection(rows.map(toStored), detected.map(fromEvent), detectedAt);
    for (const signal of upserts) {
      const id = ids.get(signal.key) ?? nextId++;
      await this.saveSignal(trx, signal, id);
    }
  }

  private async saveSignal(trx: Trx, signal: StoredSignal, id: number): Promise<void> {
    const row = toRow(signal, id);
    const { key: _key, ...update } = row;
    await trx
      .insertInto('signals')
      .values(row)
      .onConflict((oc) => oc.column('key').doUpdateSet(update))
      .execute();
  }

  /** Applies a judgement with the event's time; one the log ordered after a conflicting one is ignored. */
  private async judge(trx: Trx, key: string, action: TriageAction, at: Date): Promise<void> {
    const row = await trx.selectFrom('signals').selectAll().where('key', '=', key).executeTakeFirst();
    if (!row) return;
    try {
      await this.saveSignal(trx, transitionSignal(toStored(row), action, at), row.id);
    } catch (error) {
      if (!(error instanceof TriageError)) throw error;
      this.logger.warn(`ignored: ${error.message}`);
    }
  }

  @On(SignalTriaged)
  async signalTriaged(trx: Trx, event: EventOf<typeof SignalTriaged>): Promise<void> {
    const { key, action, until } = event.data;
    const triage: TriageAction =
      action === 'snooze' ? { type: 'snooze', until: new Date(until ?? Number.NaN) } : { type: action };
    await this.judge(trx, key, triage, new Date(event.occurred_at));
  }

  @On(InferenceMinted)
  async inferenceMinted(trx: Trx, event: EventOf<typeof InferenceMinted>): Promise<void> {
    const { id, title, summary, confidence, model_id, signal_key } = event.data;
    const { numInsertedOrUpdatedRows } = await trx
      .insertInto('inferences')
      .values({
        id,
        title,
        summary,
        confidence,
        model_id,
        signal_key,
        made_by: event.actor.id,
        minted_at: new Date(event.occurred_at),
        revision: 1,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    if (!numInsertedOrUpdatedRows) return;
    await this.saveSources(trx, event.data);
    if (signal_key) await this.judge(trx, signal_key, { type: 'mint', inferenceId: id }, new Date(event.occurred_at));
  }

  @On(InferenceReminted)
  async inferenceReminted(trx: Trx, event: EventOf<typeof InferenceReminted>): Promise<void> {
    const { id, title, summary, confidence, model_id } = event.data;
    const updated = await trx
      .updateTable('inferences')
      .set((eb) => ({
        title,
        summary,
        confidence,
        model_id,
        minted_at: new Date(event.occurred_at),
        revision: eb('revision', '+', 1),
      }))
      .where('id', '=', id)
      .executeTakeFirst();
    if (!updated.numUpdatedRows) return;
    await trx.deleteFrom('inference_sources').where('inference_id', '=', id).execute();
    await this.saveSources(trx, event.data);
  }

  /** Evidence rows with the hash from the event and the note's title and visibility as the read model has them now. */
  private async saveSources(
    trx: Trx,
    data: { id: number; sources: Array<{ note_id: string; content_hash: string }> },
  ): Promise<void> {
    await sql`insert into inference_sources (inference_id, ordinal, note_id, content_hash, title, kind, labels, spam)
      select ${data.id}, s.ordinal, s.note_id, s.content_hash, coalesce(n.title, ''), n.kind, n.labels, n.spam
      from jsonb_to_recordset(${JSON.stringify(data.sources.map((s, ordinal) => ({ ...s, ordinal })))}::jsonb)
        as s(ordinal integer, note_id text, content_hash text)
      left join notes n on n.id = s.note_id`.execute(trx);
  }
}
