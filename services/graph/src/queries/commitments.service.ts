import { Inject, Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import { CommitmentsList, type Commitment, type ParamsOf, type ResultOf } from '@memex/contracts';
import { DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import { itemVisible, type Db } from './access.js';

/** `memex commitments`: what was promised, due first, as the caller may see the items they were read in. */
@Injectable()
export class CommitmentsQueries {
  constructor(@Inject(DATABASE) private readonly db: Db) {}

  @RpcMethod(CommitmentsList)
  async list(params: ParamsOf<typeof CommitmentsList>, call: CallContext): Promise<ResultOf<typeof CommitmentsList>> {
    const rows = await sql<{ id: string; item: string; made_by: string; body: Commitment; status: string | null }>`
      select c.id, c.item, c.made_by, c.body, s.status
      from commitments c join items i on i.id = c.item left join commitment_status s on s.id = c.id
      where ${itemVisible(call.scope)}
        ${params.status ? sql`and coalesce(s.status, 'open') = ${params.status}` : sql``}
      order by c.due asc nulls last, c.id
      limit ${params.limit ?? 100}`.execute(this.db);
    return {
      commitments: rows.rows.map((r) => ({
        id: r.id,
        item_id: r.item,
        ...r.body,
        status: (r.status ?? 'open') as 'open' | 'done' | 'dropped',
        status_by_owner: r.status !== null,
        made_by: r.made_by,
      })),
    };
  }
}
