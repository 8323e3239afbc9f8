import { Inject, Injectable } from '@nestjs/common';
import { MemexError } from '@memex/contracts';
import { CONFIG, ServiceHost } from '@memex/runtime';
import type { MemexConfig } from '@memex/config';

/**
 * Commands check what they refer to in the read model. A thing written a moment ago may not be
 * projected yet, so a lookup that finds nothing waits for the projector to reach the log's end
 * and looks once more before answering not_found.
 */
@Injectable()
export class Consistent {
  constructor(
    private readonly host: ServiceHost,
    @Inject(CONFIG) private readonly config: MemexConfig,
  ) {}

  async read<T>(lookup: () => Promise<T>): Promise<T> {
    try {
      return await lookup();
    } catch (error) {
      if (!(error instanceof MemexError) || error.code !== 'not_found' || !this.host.projector) throw error;
      await this.host.projector.caughtUp(this.config.minSeqTimeoutMs);
      return lookup();
    }
  }
}
