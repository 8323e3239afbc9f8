import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as ort from 'onnxruntime-node';

/** The ONNX Runtime execution provider a session runs on. */
export type OnnxProvider = 'cuda' | 'cpu';

/**
 * The providers to try, best first: CUDA, then the CPU. `MEMEX_ONNX_PROVIDER=cpu` (or `cuda`)
 * forces one. onnxruntime-node carries the CUDA provider only where its CUDA libraries were
 * installed (ONNXRUNTIME_NODE_INSTALL=cuda on a GPU machine); elsewhere the CPU runs.
 */
export function onnxProviders(): OnnxProvider[] {
  const forced = process.env['MEMEX_ONNX_PROVIDER'];
  if (forced === 'cpu' || forced === 'cuda') return [forced];
  return cudaInstalled() ? ['cuda', 'cpu'] : ['cpu'];
}

/** Whether this onnxruntime-node has its CUDA provider library beside its binding (asking for it otherwise logs a load error). */
function cudaInstalled(): boolean {
  const dist = path.dirname(createRequire(import.meta.url).resolve('onnxruntime-node'));
  const bin = path.join(dist, '..', 'bin', 'napi-v6', process.platform, process.arch);
  return fs.existsSync(path.join(bin, 'libonnxruntime_providers_cuda.so'));
}

/**
 * Loads with the first provider that works and says which one ran: one provider at a time,
 * since onnxruntime given a list falls back silently. `load` makes the session(s), e.g.
 * `(options) => ort.InferenceSession.create(path, options)` or a library's `onnxOptions`.
 */
export async function withOnnxProvider<T>(
  load: (options: ort.InferenceSession.SessionOptions) => Promise<T>,
): Promise<{ value: T; provider: OnnxProvider }> {
  let lastError: unknown;
  for (const provider of onnxProviders()) {
    try {
      return { value: await load({ executionProviders: [provider] }), provider };
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}
