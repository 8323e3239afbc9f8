/**
 * Model2Vec static embeddings (https://github.com/MinishLab/model2vec): a folder with
 * `config.json`, `tokenizer.json` and `model.safetensors`. A text's vector is the mean of its
 * tokens' vectors, tokenized without special tokens and with unknown tokens dropped, as the
 * reference implementations do. Vocabulary-quantized models store fewer vectors than tokens:
 * token t then uses row `mapping[t]` scaled by `weights[t]`.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { asRecord, ModelLoadError, positiveInt, readJson, readJsonIfExists, requireFiles, sha8File } from './files.js';
import { chunks, l2normalize, type EmbeddingProvider, type ProviderDescription } from './provider.js';
import { parseSafetensors, toFloat32, toInt32, type SafeTensor } from './safetensors.js';
import { loadTokenizer, preTruncate, type LoadedTokenizer } from './tokenizer.js';

export const MODEL2VEC_FILES = ['config.json', 'tokenizer.json', 'model.safetensors'] as const;

/** Names the embedding matrix goes by: model2vec, sentence-transformers StaticEmbedding, older exports. */
const EMBEDDING_TENSOR_NAMES = ['embeddings', 'embedding.weight', '0'];

export interface Model2VecOptions {
  /** Human name in the space id; default: the folder's name. */
  name?: string;
  /** Tokens read per text (model2vec's default 512). */
  maxTokens?: number;
  /** Texts embedded between yields to the event loop. */
  batchSize?: number;
}

export class Model2VecProvider implements EmbeddingProvider {
  private constructor(
    readonly space: string,
    readonly dims: number,
    private readonly dir: string,
    private readonly tok: LoadedTokenizer,
    private readonly embeddings: Float32Array,
    private readonly mapping: Int32Array | undefined,
    private readonly weights: Float32Array | undefined,
    private readonly maxTokens: number,
    private readonly batchSize: number,
    private readonly configNormalize: boolean,
  ) {}

  static async load(dir: string, options: Model2VecOptions = {}): Promise<Model2VecProvider> {
    const [configPath, , weightsPath] = await requireFiles(dir, 'Model2Vec', MODEL2VEC_FILES);
    const config = asRecord(await readJson(configPath!));
    const tok = await loadTokenizer(dir);
    const tensors = parseSafetensors(await readFile(weightsPath!), weightsPath!);
    const fail = (msg: string): never => {
      throw new ModelLoadError(`${weightsPath}: ${msg}`, weightsPath!);
    };

    const matrix =
      EMBEDDING_TENSOR_NAMES.map((n) => tensors.get(n)).find((t): t is SafeTensor => t !== undefined) ??
      fail(
        `no embedding tensor (looked for ${EMBEDDING_TENSOR_NAMES.join(', ')}; found ${[...tensors.keys()].join(', ') || 'none'})`,
      );
    if (matrix.shape.length !== 2) fail(`tensor ${matrix.name} has shape [${matrix.shape}], expected [rows, dims]`);
    const [rows, dims] = matrix.shape as [number, number];
    const hiddenDim = positiveInt(config.hidden_dim);
    if (hiddenDim !== undefined && hiddenDim !== dims)
      fail(`config.json hidden_dim ${hiddenDim} but tensor has ${dims} dims`);

    // Every id the tokenizer can emit must resolve to a row (and a weight), checked once here.
    let idSpace = 0;
    for (const id of tok.tokenizer.get_vocab(true).values()) idSpace = Math.max(idSpace, id + 1);
    const mappingTensor = tensors.get('mapping');
    const mapping = mappingTensor ? toInt32(mappingTensor) : undefined;
    if (mapping) {
      if (mapping.length < idSpace) fail(`mapping has ${mapping.length} entries for ${idSpace} token ids`);
      if (mapping.some((r) => r < 0 || r >= rows)) fail(`mapping points outside the ${rows} embedding rows`);
    } else if (rows < idSpace) {
      fail(`${rows} embedding rows for ${idSpace} token ids`);
    }
    const weightsTensor = tensors.get('weights');
    const weights = weightsTensor ? toFloat32(weightsTensor) : undefined;
    if (weights && weights.length < idSpace) fail(`weights has ${weights.length} entries for ${idSpace} token ids`);

    const name = options.name ?? path.basename(path.resolve(dir));
    return new Model2VecProvider(
      `model2vec:${name}@${await sha8File(weightsPath!)}`,
      dims,
      dir,
      tok,
      toFloat32(matrix),
      mapping,
      weights,
      options.maxTokens ?? 512,
      options.batchSize ?? 256,
      await configNormalize(config, dir),
    );
  }

  /** Token ids that contribute to a text's vector: no special tokens, unknowns dropped, truncated. */
  tokenIds(text: string): number[] {
    const { tokenizer, unkId, medianTokenChars } = this.tok;
    const ids = tokenizer.encode(preTruncate(text, this.maxTokens, medianTokenChars), {
      add_special_tokens: false,
    }).ids;
    return ids.filter((id) => id !== unkId).slice(0, this.maxTokens);
  }

  /** Mean of the token vectors, L2-normalized; all-zero when no token is known. */
  embedOne(text: string): Float32Array {
    const ids = this.tokenIds(text);
    const out = new Float32Array(this.dims);
    for (const id of ids) {
      const row = this.mapping ? this.mapping[id]! : id;
      const scale = this.weights ? this.weights[id]! : 1;
      const off = row * this.dims;
      for (let d = 0; d < this.dims; d++) out[d]! += scale * this.embeddings[off + d]!;
    }
    // The mean's 1/n factor disappears in normalization.
    return l2normalize(out);
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (const batch of chunks(texts, this.batchSize)) {
      for (const text of batch) out.push(this.embedOne(text));
      if (out.length < texts.length) await yieldToEventLoop(); // keep a service responsive on big inputs
    }
    return out;
  }

  describe(): ProviderDescription {
    return {
      kind: 'model2vec',
      space: this.space,
      dims: this.dims,
      source: this.dir,
      details: {
        maxTokens: this.maxTokens,
        vocabularyQuantized: this.mapping !== undefined,
        tokenWeights: this.weights !== undefined,
        // Output is always normalized (the provider contract); this is what the model's config asked for.
        configNormalize: this.configNormalize,
      },
    };
  }

  async close(): Promise<void> {}
}

/** config.json's `normalize`, else whether modules.json has a Normalize stage; default true. */
async function configNormalize(config: Record<string, unknown>, dir: string): Promise<boolean> {
  if (typeof config.normalize === 'boolean') return config.normalize;
  const modules = await readJsonIfExists(path.join(dir, 'modules.json'));
  if (!Array.isArray(modules)) return true;
  return modules.some((m) => String(asRecord(m).type ?? '').includes('Normalize'));
}
