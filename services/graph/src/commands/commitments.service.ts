import { Inject, Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import { CommitmentsSet, CommitmentStatusSet, MemexError, type ParamsOf, type ResultOf } from '@memex/contracts';
import { EventPublisher } from '@memex/bus';
import { DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import type { Db } from '../queries/access.js';
import { Consistent } from './consistent.js';

/** `memex commitments set`: the owner's open, done or dropped on a commitment the graph holds. */
@Injectable()
export class CommitmentsCommands {
  constructor(
    private readonly publisher: EventPublisher,
    private readonly consistent: Consistent,
    @Inject(DATABASE) private readonly db: Db,
  ) {}

  @RpcMethod(CommitmentsSet)
  async set(params: ParamsOf<typeof CommitmentsSet>, call: CallContext): Promise<ResultOf<typeof CommitmentsSet>> {
    await this.consistent.read(async () => {
      const found = await sql`select 1 from commitments where id = ${params.id}`.execute(this.db);
      if (found.rows.length === 0) throw new MemexError('not_found', `no commitment ${params.id}`);
    });
    const { seq } = await this.publisher.publish(CommitmentStatusSet, {
      subject: `commitment:${params.id}`,
      actor: call.caller,
      data: { commitment_id: params.id, status: params.status },
    });
    return { id: params.id, status: params.status, seq };
  }
}
