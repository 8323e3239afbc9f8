import path from 'node:path';
import { Injectable } from '@nestjs/common';
import {
  ChatModelAdded,
  MemexError,
  ModelActivated,
  ModelAdded,
  ModelsAdd,
  ModelsUse,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { EventPublisher } from '@memex/bus';
import { BUILTIN_SPEC, loadProvider, type EmbeddingProvider } from '@memex/embeddings';
import { RpcMethod, type CallContext } from '@memex/runtime';
import { chatModelId, ModelRegistry } from '../domain/models/registry.js';

/** How long a registration waits for this process to take it in before answering. */
const REGISTERED_TIMEOUT_MS = 10_000;

/** `memex models add|use`: registering embedding and chat models. */
@Injectable()
export class ModelsService {
  constructor(
    private readonly publisher: EventPublisher,
    private readonly models: ModelRegistry,
  ) {}

  /** Loads the model once (so a bad path or an unreachable server fails here, not in the workers) and logs it. */
  @RpcMethod(ModelsAdd)
  async add(params: ParamsOf<typeof ModelsAdd>, call: CallContext): Promise<ResultOf<typeof ModelsAdd>> {
    if (params.tasks) return this.addChat(params, call);
    const spec = params.path;
    if (spec !== BUILTIN_SPEC && !/^https?:\/\//i.test(spec) && !path.isAbsolute(spec)) {
      throw new MemexError(
        'invalid_params',
        `model path must be absolute (workers on other machines read the same path), got "${spec}"`,
      );
    }
    let provider: EmbeddingProvider;
    try {
      provider = await loadProvider(spec, {
        ...(params.name ? { name: params.name } : {}),
        ...(params.model ? { model: params.model } : {}),
        ...(params.protocol ? { protocol: params.protocol } : {}),
      });
    } catch (error) {
      throw new MemexError('invalid_params', `cannot load a model from ${spec}: ${(error as Error).message}`);
    }
    try {
      const { kind, space, dims, details } = provider.describe();
      if (this.models.get(space)) {
        throw new MemexError(
          'conflict',
          `space ${space} is already registered; choose it with \`memex models use ${space}\``,
        );
      }
      const { seq } = await this.publisher.publish(ModelAdded, {
        subject: `model:${space}`,
        actor: call.caller,
        expectFirst: true,
        data: {
          space,
          kind,
          dims,
          spec,
          details,
          ...(params.name ? { name: params.name } : {}),
          ...(params.model ? { model: params.model } : {}),
          ...(params.protocol ? { protocol: params.protocol } : {}),
        },
      });
      // Logged either way: a registry slower than the wait is no failure.
      await this.models.reached(seq, REGISTERED_TIMEOUT_MS);
      return { space, kind, dims, seq };
    } finally {
      await provider.close();
    }
  }

  /**
   * A chat model for tiers 2 and 3. Not called here (a first request costs money and may be
   * rate limited): a wrong URL shows as the tier's failures in `memex jobs`.
   */
  private async addChat(params: ParamsOf<typeof ModelsAdd>, call: CallContext): Promise<ResultOf<typeof ModelsAdd>> {
    if (!/^https?:\/\//i.test(params.path))
      throw new MemexError('invalid_params', `a chat model is an http(s) URL, got "${params.path}"`);
    if (!params.model)
      throw new MemexError('invalid_params', 'a chat model needs --model (the name the endpoint knows)');
    const name = params.name ?? params.model.replace(/[^A-Za-z0-9._:-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '');
    const version = params.version ?? '1';
    if (!/^[A-Za-z0-9][A-Za-z0-9._:+-]*$/.test(version))
      throw new MemexError('invalid_params', `version "${version}" may hold letters, digits and . _ : + - only`);
    const id = chatModelId({ name, version });
    if (this.models.chat(id))
      throw new MemexError('conflict', `chat model ${id} is already registered; give a new --version to change it`);
    const { seq } = await this.publisher.publish(ChatModelAdded, {
      subject: `chat_model:${id}`,
      actor: call.caller,
      expectFirst: true,
      data: {
        name,
        version,
        url: params.path,
        protocol: params.protocol ?? 'openai',
        model: params.model,
        tasks: [...new Set(params.tasks)],
        kinds: params.kinds ?? [],
        budget: params.budget ?? {},
        cost_per_1k_tokens: params.cost_per_1k_tokens ?? 0,
      },
    });
    // Logged either way: a registry slower than the wait is no failure.
    await this.models.reached(seq, REGISTERED_TIMEOUT_MS);
    return { space: id, kind: 'chat', dims: 0, seq };
  }

  @RpcMethod(ModelsUse)
  async use(params: ParamsOf<typeof ModelsUse>, call: CallContext): Promise<ResultOf<typeof ModelsUse>> {
    if (!this.models.get(params.space)) {
      throw new MemexError(
        'not_found',
        `no embedding space ${params.space}; known: ${this.models.spaces().join(', ')}`,
      );
    }
    const { seq } = await this.publisher.publish(ModelActivated, {
      subject: `model:${params.space}`,
      actor: call.caller,
      data: { space: params.space },
    });
    // Logged either way: a registry slower than the wait is no failure.
    await this.models.reached(seq, REGISTERED_TIMEOUT_MS);
    return { space: params.space, seq };
  }
}
