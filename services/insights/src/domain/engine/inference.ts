/**
 * Inferences: agent-synthesised hypotheses with provenance. Each keeps, per
 * source note, the content hash it had at mint time; every read compares
 * those with the current hashes (invalidation on read).
 */

export interface InferenceSource {
  noteId: string;
  /** The note's content hash when the inference was minted. */
  contentHash: string;
}

export interface MintInput {
  title: string;
  summary: string;
  /** In [0, 1]. */
  confidence: number;
  modelId: string;
  /** In citation order; each note once. */
  sources: InferenceSource[];
  /** The signal it was synthesised from, if any. */
  signalKey?: string | null;
}

export interface MintedInference {
  title: string;
  summary: string;
  confidence: number;
  modelId: string;
  sources: InferenceSource[];
  signalKey: string | null;
  mintedAt: Date;
  /** 1 at first mint, +1 per re-mint. */
  revision: number;
}

/** A stored inference; the id is assigned by the store. */
export interface Inference extends MintedInference {
  id: number;
}

export class InferenceValidationError extends Error {
  constructor(message: string) {
    super(`invalid inference: ${message}`);
    this.name = 'InferenceValidationError';
  }
}

/** Validates and normalises (trims) a new inference. */
export function mintInference(input: MintInput, mintedAt: Date): MintedInference {
  const text = (field: 'title' | 'summary' | 'modelId'): string => {
    const value = input[field];
    if (typeof value !== 'string' || value.trim() === '')
      throw new InferenceValidationError(`${field} must be non-empty`);
    return value.trim();
  };
  const { confidence } = input;
  if (typeof confidence !== 'number' || !(confidence >= 0 && confidence <= 1)) {
    throw new InferenceValidationError(`confidence must be a number in [0, 1], got ${confidence}`);
  }
  if (!Array.isArray(input.sources) || input.sources.length === 0) {
    throw new InferenceValidationError('at least one source note is required');
  }
  const seen = new Set<string>();
  const sources = input.sources.map(({ noteId, contentHash }, i) => {
    if (typeof noteId !== 'string' || noteId.trim() === '') {
      throw new InferenceValidationError(`sources[${i}].noteId must be non-empty`);
    }
    if (typeof contentHash !== 'string' || contentHash.trim() === '') {
      throw new InferenceValidationError(`sources[${i}] (note ${noteId}) has no content hash`);
    }
    if (seen.has(noteId)) throw new InferenceValidationError(`note ${noteId} is cited twice`);
    seen.add(noteId);
    return { noteId, contentHash };
  });
  if (!(mintedAt instanceof Date) || Number.isNaN(mintedAt.getTime())) {
    throw new InferenceValidationError('mintedAt is not a valid date');
  }
  return {
    title: text('title'),
    summary: text('summary'),
    confidence,
    modelId: text('modelId'),
    sources,
    signalKey: input.signalKey ?? null,
    mintedAt,
    revision: 1,
  };
}

/**
 * Re-minting replaces the whole synthesis (claim, confidence and every
 * source hash: synthesis is holistic, partial patching is brittle) under the
 * same id; with the fresh hashes the inference reads as active again.
 */
export function remintInference(previous: Inference, input: MintInput, mintedAt: Date): Inference {
  return { ...mintInference(input, mintedAt), id: previous.id, revision: previous.revision + 1 };
}

export type InferenceStatus = 'active' | 'stale' | 'orphaned';
/** ' ' unchanged, '~' changed since mint, '✗' deleted. */
export type SourceMark = ' ' | '~' | '✗';

export interface SourceEvaluation {
  noteId: string;
  mark: SourceMark;
  snapshotHash: string;
  /** null when the note no longer exists. */
  currentHash: string | null;
}

export interface InferenceEvaluation {
  status: InferenceStatus;
  sources: SourceEvaluation[];
}

/**
 * Compares the snapshot with `current` (note id → its content hash now;
 * absent or undefined = deleted). Any deleted source makes it orphaned (which
 * outranks stale), else any changed one stale, else active. Every source row
 * is kept, so the loss stays visible.
 */
export function evaluateInference(
  inference: Pick<MintedInference, 'sources'>,
  current: ReadonlyMap<string, string | undefined>,
): InferenceEvaluation {
  const sources = inference.sources.map(({ noteId, contentHash }): SourceEvaluation => {
    const now = current.get(noteId);
    const mark: SourceMark = now === undefined ? '✗' : now === contentHash ? ' ' : '~';
    return { noteId, mark, snapshotHash: contentHash, currentHash: now ?? null };
  });
  const status: InferenceStatus = sources.some((s) => s.mark === '✗')
    ? 'orphaned'
    : sources.some((s) => s.mark === '~')
      ? 'stale'
      : 'active';
  return { status, sources };
}

const FLAG: Record<InferenceStatus, string> = { active: '', stale: '[!] STALE', orphaned: '[!] STALE · ORPHANED' };

/**
 * How an agent cites it: "[Inference #42, conf 0.78, from notes #1, #2]".
 * Given an evaluation, changed/deleted sources get their mark ("~#2", "✗#3")
 * and a flagged inference is followed by its flag.
 */
export function formatCitation(
  inference: Pick<Inference, 'id' | 'confidence' | 'sources'>,
  evaluation?: InferenceEvaluation,
): string {
  const marks = new Map(evaluation?.sources.map((s) => [s.noteId, s.mark === ' ' ? '' : s.mark]));
  const notes = inference.sources.map((s) => `${marks.get(s.noteId) ?? ''}#${s.noteId}`).join(', ');
  const citation = `[Inference #${inference.id}, conf ${inference.confidence.toFixed(2)}, from notes ${notes}]`;
  return evaluation && evaluation.status !== 'active' ? `${citation} ${FLAG[evaluation.status]}` : citation;
}

/** A plain-text card for the CLI and digest: flag, claim, summary, and each source with its mark. */
export function renderInference(inference: Inference, evaluation: InferenceEvaluation): string {
  const flag = FLAG[evaluation.status];
  const lines = [
    `${flag ? `${flag}  ` : ''}Inference #${inference.id}: ${inference.title}`,
    `conf ${inference.confidence.toFixed(2)} · model ${inference.modelId} · minted ${inference.mintedAt.toISOString()} · revision ${inference.revision}`,
    ...inference.summary.split('\n').map((line) => `  ${line}`),
    'sources:',
    ...evaluation.sources.map((s) => {
      const note =
        s.mark === '~'
          ? '  changed since mint'
          : s.mark === '✗'
            ? `  deleted (evidence kept: hash ${s.snapshotHash.slice(0, 12)} at mint)`
            : '';
      return `  ${s.mark} #${s.noteId}${note}`;
    }),
  ];
  return lines.join('\n');
}
