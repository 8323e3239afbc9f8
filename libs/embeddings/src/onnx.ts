/**
 * Sentence-transformers models exported to ONNX: a folder with `model.onnx` and
 * `tokenizer.json` (+ optional `sentence_bert_config.json`, `config.json`,
 * `tokenizer_config.json`, `1_Pooling/config.json`), run on CPU with onnxruntime-node.
 * The token states are pooled over the attention mask (mean, or CLS when the model's pooling
 * config says so) and L2-normalized; a model that already outputs `sentence_embedding` is used as is.
 */
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { asRecord, ModelLoadError, positiveInt, readJsonIfExists, requireFiles, sha8File } from './files.js';
import { chunks, l2normalize, type EmbeddingProvider, type ProviderDescription } from './provider.js';
import { f16ToF32 } from './safetensors.js';
import { withOnnxProvider, type OnnxProvider } from './onnx-session.js';
import { loadTokenizer, preTruncate, type LoadedTokenizer } from './tokenizer.js';

export const ONNX_FILES = ['model.onnx', 'tokenizer.json'] as const;

export type Pooling = 'mean' | 'cls';

/** Token-state outputs in order of preference (optimum / sentence-transformers export names). */
const TOKEN_OUTPUTS = ['last_hidden_state', 'token_embeddings'];
const POOLED_OUTPUT = 'sentence_embedding';
const KNOWN_INPUTS = new Set(['input_ids', 'attention_mask', 'token_type_ids']);

export interface OnnxSentenceOptions {
  /** Human name in the space id; default: the folder's name. */
  name?: string;
  /** Tokens per text, special tokens included; default from the model's configs, else 512. */
  maxTokens?: number;
  /** Texts per inference run (padded to the longest in the batch). */
  batchSize?: number;
  /** Overrides the pooling read from `1_Pooling/config.json`. */
  pooling?: Pooling;
  /** onnxruntime intra-op threads; default: its own choice (all cores). */
  threads?: number;
}

interface Encoded {
  ids: number[];
  typeIds: number[];
}

export class OnnxSentenceProvider implements EmbeddingProvider {
  private dimsValue = 0;

  private constructor(
    readonly space: string,
    private readonly dir: string,
    private readonly session: ort.InferenceSession,
    private readonly tok: LoadedTokenizer,
    private readonly outputName: string,
    private readonly maxTokens: number,
    private readonly batchSize: number,
    private readonly pooling: Pooling,
    /** The execution provider the session runs on (CUDA where it loads, else the CPU). */
    readonly executionProvider: OnnxProvider,
  ) {}

  get dims(): number {
    return this.dimsValue;
  }

  static async load(dir: string, options: OnnxSentenceOptions = {}): Promise<OnnxSentenceProvider> {
    const [modelPath] = await requireFiles(dir, 'ONNX', ONNX_FILES);
    const tok = await loadTokenizer(dir);
    const maxTokens = options.maxTokens ?? (await configuredMaxTokens(dir));
    const pooling = options.pooling ?? (await configuredPooling(dir));

    let session: ort.InferenceSession;
    let executionProvider: OnnxProvider;
    try {
      const threads = options.threads ? { intraOpNumThreads: options.threads } : {};
      ({ value: session, provider: executionProvider } = await withOnnxProvider((providers) =>
        ort.InferenceSession.create(modelPath!, { ...providers, ...threads }),
      ));
    } catch (err) {
      throw new ModelLoadError(`${modelPath} cannot be loaded by onnxruntime: ${(err as Error).message}`, modelPath!);
    }
    const unknown = session.inputNames.filter((n) => !KNOWN_INPUTS.has(n));
    if (!session.inputNames.includes('input_ids') || unknown.length > 0) {
      await session.release();
      throw new ModelLoadError(
        `${modelPath} has inputs [${session.inputNames.join(', ')}]; expected input_ids with optional attention_mask, token_type_ids`,
        modelPath!,
      );
    }
    const outputName = session.outputNames.includes(POOLED_OUTPUT)
      ? POOLED_OUTPUT
      : (TOKEN_OUTPUTS.find((n) => session.outputNames.includes(n)) ?? session.outputNames[0]!);

    const name = options.name ?? path.basename(path.resolve(dir));
    const provider = new OnnxSentenceProvider(
      `onnx:${name}@${await sha8File(modelPath!)}`,
      dir,
      session,
      tok,
      outputName,
      maxTokens,
      options.batchSize ?? 16,
      pooling,
      executionProvider,
    );
    // The output's last dimension is often symbolic in the graph: run once to learn it.
    try {
      const [probe] = await provider.embed(['dimension probe']);
      provider.dimsValue = probe!.length;
    } catch (err) {
      await session.release();
      throw new ModelLoadError(`${modelPath} failed a test run: ${(err as Error).message}`, modelPath!);
    }
    return provider;
  }

  /** Tokens the model reads for `text`: special tokens added, truncated keeping a final special token. */
  encode(text: string): Encoded {
    const { tokenizer, specialIds, medianTokenChars } = this.tok;
    const enc = tokenizer.encode(preTruncate(text, this.maxTokens, medianTokenChars), {
      add_special_tokens: true,
      return_token_type_ids: true,
    });
    let ids = enc.ids;
    let typeIds = enc.token_type_ids ?? new Array<number>(ids.length).fill(0);
    if (ids.length > this.maxTokens) {
      const last = ids.length - 1;
      const keepLast = specialIds.has(ids[last]!); // e.g. [SEP]
      const head = keepLast ? this.maxTokens - 1 : this.maxTokens;
      ids = keepLast ? [...ids.slice(0, head), ids[last]!] : ids.slice(0, head);
      typeIds = keepLast ? [...typeIds.slice(0, head), typeIds[last]!] : typeIds.slice(0, head);
    }
    return { ids, typeIds };
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const encoded = texts.map((t) => this.encode(t));
    // Batching texts of similar length wastes less compute on padding.
    const order = encoded.map((_, i) => i).sort((a, b) => encoded[a]!.ids.length - encoded[b]!.ids.length);
    const out = new Array<Float32Array>(texts.length);
    for (const batch of chunks(order, this.batchSize)) {
      const vectors = await this.runBatch(batch.map((i) => encoded[i]!));
      batch.forEach((textIndex, j) => (out[textIndex] = vectors[j]!));
    }
    return out;
  }

  private async runBatch(batch: Encoded[]): Promise<Float32Array[]> {
    const seq = Math.max(1, ...batch.map((e) => e.ids.length));
    const n = batch.length;
    const ids = new Array<number>(n * seq).fill(this.tok.padId);
    const mask = new Array<number>(n * seq).fill(0);
    const types = new Array<number>(n * seq).fill(0);
    batch.forEach((e, b) => {
      e.ids.forEach((id, t) => {
        ids[b * seq + t] = id;
        mask[b * seq + t] = 1;
        types[b * seq + t] = e.typeIds[t]!;
      });
    });
    const columns: Record<string, number[]> = {
      input_ids: ids,
      attention_mask: mask,
      token_type_ids: types,
    };
    const feeds: Record<string, ort.Tensor> = {};
    for (const meta of this.session.inputMetadata) {
      const values = columns[meta.name]!;
      feeds[meta.name] =
        meta.isTensor && meta.type === 'int32'
          ? new ort.Tensor('int32', Int32Array.from(values), [n, seq])
          : new ort.Tensor('int64', BigInt64Array.from(values, BigInt), [n, seq]);
    }
    const result = (await this.session.run(feeds, [this.outputName]))[this.outputName]!;
    const data = floatData(result, this.outputName);
    const dims = result.dims;

    if (dims.length === 2 && dims[0] === n) {
      const width = dims[1]!;
      return batch.map((_, b) => l2normalize(data.slice(b * width, (b + 1) * width)));
    }
    if (dims.length !== 3 || dims[0] !== n || dims[1] !== seq)
      throw new Error(`${this.space}: output ${this.outputName} has shape [${dims}], expected [${n}, ${seq}, dims]`);
    const width = dims[2]!;
    return batch.map((e, b) => {
      const v = new Float32Array(width);
      const base = b * seq * width;
      if (this.pooling === 'cls') {
        v.set(data.subarray(base, base + width));
      } else {
        // Sum over real tokens only; the 1/count of the mean cancels in normalization.
        for (let t = 0; t < e.ids.length; t++) {
          const off = base + t * width;
          for (let d = 0; d < width; d++) v[d]! += data[off + d]!;
        }
      }
      return l2normalize(v);
    });
  }

  describe(): ProviderDescription {
    return {
      kind: 'onnx',
      space: this.space,
      dims: this.dims,
      source: this.dir,
      details: {
        maxTokens: this.maxTokens,
        pooling: this.outputName === POOLED_OUTPUT ? 'in model' : this.pooling,
        output: this.outputName,
        inputs: this.session.inputNames.join(','),
        executionProvider: this.executionProvider,
      },
    };
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}

function floatData(tensor: ort.Tensor, name: string): Float32Array {
  if (tensor.type === 'float32') return tensor.data as Float32Array;
  if (tensor.type === 'float16') return Float32Array.from(tensor.data as Uint16Array, f16ToF32);
  throw new Error(`output ${name} is ${tensor.type}, expected float32 or float16`);
}

/** sentence_bert_config max_seq_length, else tokenizer_config model_max_length; capped by config's positions. */
async function configuredMaxTokens(dir: string): Promise<number> {
  const st = asRecord(await readJsonIfExists(path.join(dir, 'sentence_bert_config.json')));
  const tc = asRecord(await readJsonIfExists(path.join(dir, 'tokenizer_config.json')));
  const cfg = asRecord(await readJsonIfExists(path.join(dir, 'config.json')));
  // model_max_length is a huge sentinel (1e30) when unset.
  const tokenizerMax = positiveInt(tc.model_max_length);
  const wanted = positiveInt(st.max_seq_length) ?? (tokenizerMax && tokenizerMax <= 100_000 ? tokenizerMax : undefined);
  const positions = positiveInt(cfg.max_position_embeddings);
  return Math.min(wanted ?? positions ?? 512, positions ?? Infinity);
}

/** Pooling from sentence-transformers' `1_Pooling/config.json`; mean when absent. */
async function configuredPooling(dir: string): Promise<Pooling> {
  const file = path.join(dir, '1_Pooling', 'config.json');
  const cfg = asRecord(await readJsonIfExists(file));
  if (cfg.pooling_mode_mean_tokens === true || Object.keys(cfg).length === 0) return 'mean';
  if (cfg.pooling_mode_cls_token === true) return 'cls';
  const mode = Object.keys(cfg).find((k) => k.startsWith('pooling_mode_') && cfg[k] === true) ?? 'none';
  throw new ModelLoadError(`${file}: pooling ${mode} is not supported (mean or cls)`, file);
}
