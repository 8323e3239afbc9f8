import {
  ChatModelAdded,
  ModelActivated,
  ModelAdded,
  type ChatCapability,
  type DataOf,
  type EventEnvelope,
} from '@memex/contracts';
import { EventRoutes, readLog, typeFilter, type Bus } from '@memex/bus';
import {
  BUILTIN_SPEC,
  defaultProvider,
  GLOVE_SIF_DIMS,
  GLOVE_SIF_SPACE,
  loadProvider,
  type EmbeddingProvider,
} from '@memex/embeddings';

export type ModelInfo = DataOf<typeof ModelAdded>;
export type ChatModelInfo = DataOf<typeof ChatModelAdded>;

/** A chat model as the CLI names it: NAME@VERSION. */
export function chatModelId(model: Pick<ChatModelInfo, 'name' | 'version'>): string {
  return `${model.name}@${model.version}`;
}

/** The built-in space exists without an event: every memex can embed offline from the start. */
export const BUILTIN_MODEL: ModelInfo = {
  space: GLOVE_SIF_SPACE,
  kind: 'glove-sif',
  dims: GLOVE_SIF_DIMS,
  spec: BUILTIN_SPEC,
  details: {},
};

/**
 * The embedding models the log knows (`model.added`, `model.activated`), and their providers,
 * loaded once per process. Every registered space is kept filled: new items are embedded into
 * all of them, so switching back and forth never waits.
 */
export class ModelRegistry {
  private readonly models = new Map<string, ModelInfo>([[BUILTIN_MODEL.space, BUILTIN_MODEL]]);
  private readonly providers = new Map<string, Promise<EmbeddingProvider>>();
  private chosenSpace = BUILTIN_MODEL.space;
  /** Spaces a `model.added` names (the built-in space may have none). */
  private readonly logged = new Set<string>();

  private position = 0;
  private readonly waiters = new Set<{ seq: number; resolve: () => void }>();
  private readonly routes = new EventRoutes()
    .on(ModelAdded, ({ data }) => {
      this.models.set(data.space, data);
      this.logged.add(data.space);
      this.chosenSpace = data.space;
    })
    .on(ModelActivated, ({ data }) => {
      this.chosenSpace = data.space;
    })
    .on(ChatModelAdded, ({ data }) => {
      // Re-registered: it moves to the end, where routing looks first.
      const id = chatModelId(data);
      this.chatModels.delete(id);
      this.chatModels.set(id, data);
    });
  /** Chat models by NAME@VERSION, in the order they were registered. */
  private readonly chatModels = new Map<string, ChatModelInfo>();

  /** Reads every model event in the log so far. */
  async load(bus: Bus): Promise<void> {
    for await (const { seq, event } of readLog(bus, {
      filter: typeFilter('model.*'),
      fromSeq: this.position + 1,
      untilCaughtUp: true,
    })) {
      this.position = seq;
      await this.apply(event);
      this.wakeWaiters();
    }
  }

  /** Keeps up with models added later, until the signal aborts. */
  async follow(bus: Bus, signal: AbortSignal): Promise<void> {
    for await (const { seq, event } of readLog(bus, {
      filter: typeFilter('model.*'),
      fromSeq: this.position + 1,
      signal,
    })) {
      this.position = seq;
      await this.apply(event);
      this.wakeWaiters();
    }
  }

  /**
   * Waits until this process has taken in the model event at `seq`, so a model just registered is
   * usable by the next call (`memex models add`, then `memex rerun` with it): true then, false once
   * `timeoutMs` passed without it.
   */
  reached(seq: number, timeoutMs: number): Promise<boolean> {
    if (this.position >= seq) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const waiter = {
        seq,
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        resolve(false);
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  private wakeWaiters(): void {
    for (const waiter of this.waiters) {
      if (waiter.seq > this.position) continue;
      this.waiters.delete(waiter);
      waiter.resolve();
    }
  }

  /** Takes in one event; anything but a model event is ignored. */
  async apply(event: EventEnvelope): Promise<void> {
    await this.routes.dispatch(event);
  }

  get(space: string): ModelInfo | undefined {
    return this.models.get(space);
  }

  /** Whether the log holds a `model.added` for the space. */
  isLogged(space: string): boolean {
    return this.logged.has(space);
  }

  spaces(): string[] {
    return [...this.models.keys()];
  }

  chat(id: string): ChatModelInfo | undefined {
    return this.chatModels.get(id);
  }

  chats(): ChatModelInfo[] {
    return [...this.chatModels.values()];
  }

  /** Seed §5's routing: the latest chat model registered for the capability and the item's kind. */
  routeChat(capability: ChatCapability, kind: string): ChatModelInfo | undefined {
    return this.chats()
      .reverse()
      .find((m) => m.tasks.includes(capability) && (m.kinds.length === 0 || m.kinds.includes(kind)));
  }

  get chosen(): string {
    return this.chosenSpace;
  }

  /** The provider of a space, loaded on first use; fails when the model is not (or no longer) that space. */
  provider(space: string): Promise<EmbeddingProvider> {
    let provider = this.providers.get(space);
    if (!provider) {
      const info = this.models.get(space);
      if (!info) return Promise.reject(new Error(`unknown embedding space ${space}`));
      provider = openModel(info).catch((error: unknown) => {
        this.providers.delete(space);
        throw error;
      });
      this.providers.set(space, provider);
    }
    return provider;
  }

  async close(): Promise<void> {
    const providers = [...this.providers.values()];
    this.providers.clear();
    for (const provider of providers) await (await provider.catch(() => undefined))?.close();
  }
}

/** Loads the model a `model.added` names and checks it still is the same space (same files, same version). */
export async function openModel(info: ModelInfo): Promise<EmbeddingProvider> {
  if (info.spec === BUILTIN_SPEC) return defaultProvider();
  const provider = await loadProvider(info.spec, {
    ...(info.name ? { name: info.name } : {}),
    ...(info.model ? { model: info.model } : {}),
    ...(info.protocol ? { protocol: info.protocol } : {}),
    dims: info.dims,
  });
  if (provider.space !== info.space) {
    await provider.close();
    throw new Error(
      `the model at ${info.spec} is now space ${provider.space}, not ${info.space}: add it again as a new model`,
    );
  }
  return provider;
}
