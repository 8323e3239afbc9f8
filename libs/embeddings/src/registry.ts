/**
 * From what the user configured (`memex models add PATH|URL`) to a provider. Models are
 * only ever read from a local folder or asked of a server the user named; nothing is downloaded.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { asRecord, fileExists, ModelLoadError, readJsonIfExists } from './files.js';
import { GloveSifProvider } from './glove.js';
import { HttpEmbeddingProvider, type HttpProtocol } from './http.js';
import { Model2VecProvider } from './model2vec.js';
import { OnnxSentenceProvider } from './onnx.js';
import type { EmbeddingProvider, ProviderKind } from './provider.js';

/** The spec string that names the built-in GloVe-SIF embedder. */
export const BUILTIN_SPEC = 'builtin:glove';

export interface LoadProviderOptions {
  /** Name used in the space id of a folder model (default: the folder's name). */
  name?: string;
  /** Model name: required for http(s) specs. */
  model?: string;
  /** For http(s) specs; default "openai". */
  protocol?: HttpProtocol;
  apiKey?: string;
  /** For http(s) specs: skip the probe request that learns the dimensions. */
  dims?: number;
}

/** Which provider a spec names: the built-in, an http(s) URL, or a model folder by its files. */
export async function detectProviderKind(spec: string): Promise<ProviderKind> {
  if (spec === BUILTIN_SPEC) return 'glove-sif';
  if (/^https?:\/\//i.test(spec)) return 'http';
  const st = await stat(spec).catch(() => undefined);
  if (!st) throw new ModelLoadError(`model path not found: ${spec}`, spec);
  if (!st.isDirectory()) throw new ModelLoadError(`${spec} is a file; give the model's folder`, spec);
  const hasSafetensors = await fileExists(path.join(spec, 'model.safetensors'));
  const hasOnnx = await fileExists(path.join(spec, 'model.onnx'));
  // A transformer folder may ship model.safetensors beside model.onnx; Model2Vec says so in its config.
  const config = asRecord(await readJsonIfExists(path.join(spec, 'config.json')).catch(() => undefined));
  if (hasSafetensors && (config.model_type === 'model2vec' || !hasOnnx)) return 'model2vec';
  if (hasOnnx) return 'onnx';
  throw new ModelLoadError(
    `${spec} holds neither model.safetensors (a Model2Vec model) nor model.onnx (an ONNX sentence-transformers export)`,
    spec,
  );
}

/** Loads the provider a spec names (see `detectProviderKind`). */
export async function loadProvider(spec: string, options: LoadProviderOptions = {}): Promise<EmbeddingProvider> {
  const name = options.name === undefined ? {} : { name: options.name };
  switch (await detectProviderKind(spec)) {
    case 'glove-sif':
      return defaultProvider();
    case 'model2vec':
      return Model2VecProvider.load(spec, name);
    case 'onnx':
      return OnnxSentenceProvider.load(spec, name);
    case 'http':
      if (!options.model) throw new Error(`HTTP embedding endpoint ${spec} needs a model name`);
      return HttpEmbeddingProvider.connect({
        baseUrl: spec,
        model: options.model,
        ...(options.protocol ? { protocol: options.protocol } : {}),
        ...(options.apiKey ? { apiKey: options.apiKey } : {}),
        ...(options.dims ? { dims: options.dims } : {}),
      });
  }
}

let builtin: Promise<GloveSifProvider> | undefined;

/** The built-in GloVe-SIF provider, which works offline with no configuration. Shared; cheap to call. */
export function defaultProvider(): Promise<GloveSifProvider> {
  builtin ??= GloveSifProvider.create().catch((err: unknown) => {
    builtin = undefined; // let a later call try again
    throw err;
  });
  return builtin;
}
