import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { ItemsGet, MemexError, type ParamsOf, type ResultOf } from '@memex/contracts';
import { visibleTo } from '@memex/db';
import { DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import type { IngestDatabase } from './schema.js';

@Injectable()
export class ItemsService {
  constructor(@Inject(DATABASE) private readonly db: Kysely<IngestDatabase>) {}

  @RpcMethod(ItemsGet)
  async get(params: ParamsOf<typeof ItemsGet>, call: CallContext): Promise<ResultOf<typeof ItemsGet>> {
    const row = await this.db
      .selectFrom('items')
      .selectAll()
      .where('id', '=', params.id)
      .where(visibleTo(call.scope))
      .executeTakeFirst();
    // Out of scope reads exactly like absent: a scope never reveals that an item exists.
    if (!row) throw new MemexError('not_found', `no item ${params.id}`);
    return {
      id: row.id,
      kind: row.kind,
      title: row.title,
      text: row.text,
      labels: row.labels,
      source: { kind: row.source_kind, id: row.source_id },
      occurred_at: row.occurred_at?.toISOString() ?? null,
      added_at: row.added_at.toISOString(),
      made_by: { kind: row.made_by_kind, id: row.made_by_id },
      meta: row.meta,
    };
  }
}
