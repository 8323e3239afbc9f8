import type { EmbeddingProvider } from './provider.js';

/**
 * Throughput of `provider` on `texts`, in texts per second, for the project's benchmarks.
 * One small warm-up call first (JIT, onnxruntime's first-run allocations, HTTP keep-alive),
 * then all texts in a single `embed` call so the provider batches them its own way.
 */
export async function benchEmbed(provider: EmbeddingProvider, texts: string[]): Promise<number> {
  if (texts.length === 0) throw new Error('benchEmbed needs at least one text');
  await provider.embed(texts.slice(0, Math.min(8, texts.length)));
  const start = process.hrtime.bigint();
  const vectors = await provider.embed(texts);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (vectors.length !== texts.length)
    throw new Error(`${provider.space} returned ${vectors.length} vectors for ${texts.length} texts`);
  return texts.length / seconds;
}
