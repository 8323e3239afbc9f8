import path from 'node:path';
import { Injectable } from '@nestjs/common';
import {
  JobsStatus,
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
import { JobQueue } from '../jobs/queue.js';
import { WorkerPool } from '../workers/pool.js';
import { ModelRegistry } from './registry.js';

/** `memex models add|use` and the job backlog: the commands of the pipelines area. */
@Injectable()
export class ModelsService {
  constructor(
    private readonly publisher: EventPublisher,
    private readonly models: ModelRegistry,
    private readonly queue: JobQueue,
    private readonly pool: WorkerPool,
  ) {}

  /** Loads the model once (so a bad path or an unreachable server fails here, not in the workers) and logs it. */
  @RpcMethod(ModelsAdd)
  async add(params: ParamsOf<typeof ModelsAdd>, call: CallContext): Promise<ResultOf<typeof ModelsAdd>> {
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
      return { space, kind, dims, seq };
    } finally {
      await provider.close();
    }
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
    return { space: params.space, seq };
  }

  @RpcMethod(JobsStatus)
  async status(): Promise<ResultOf<typeof JobsStatus>> {
    return { queues: await this.queue.backlog(), workers: this.pool.workers };
  }
}
