import { BUILTIN_SPEC, defaultProvider, loadProvider, type EmbeddingProvider } from '@memex/embeddings';
import type { SpaceRow } from '../projection/vectors.js';

/**
 * Embeds queries in the space search answers from, with the same model the workers used (loaded
 * once per space from where `model.added` said it is). A model that is now another space (its
 * files changed) is refused rather than compared with vectors it did not make.
 */
export class QueryEmbedder {
  private readonly providers = new Map<string, Promise<EmbeddingProvider>>();

  async embed(space: SpaceRow, text: string): Promise<Float32Array> {
    const provider = await this.provider(space);
    const [vector] = await provider.embed([text]);
    return vector!;
  }

  private provider(space: SpaceRow): Promise<EmbeddingProvider> {
    let provider = this.providers.get(space.space);
    if (!provider) {
      provider = this.open(space).catch((error: unknown) => {
        this.providers.delete(space.space);
        throw error;
      });
      this.providers.set(space.space, provider);
    }
    return provider;
  }

  private async open(space: SpaceRow): Promise<EmbeddingProvider> {
    if (space.spec === BUILTIN_SPEC) return defaultProvider();
    if (!space.spec) throw new Error(`space ${space.space} has vectors but no registered model to embed queries with`);
    const provider = await loadProvider(space.spec, {
      ...(space.name ? { name: space.name } : {}),
      ...(space.model ? { model: space.model } : {}),
      ...(space.protocol ? { protocol: space.protocol } : {}),
      dims: space.dims,
    });
    if (provider.space !== space.space) {
      await provider.close();
      throw new Error(`the model at ${space.spec} is now space ${provider.space}, not ${space.space}`);
    }
    return provider;
  }

  async close(): Promise<void> {
    for (const provider of this.providers.values()) await (await provider.catch(() => undefined))?.close();
    this.providers.clear();
  }
}
