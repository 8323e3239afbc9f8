import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { MailOutgoing, type ParamsOf, type ResultOf } from '@memex/contracts';
import { DATABASE, RpcMethod } from '@memex/runtime';
import type { MailSyncDatabase } from '../projection/schema.js';

/** memex.mail.outgoing: the Scheduled, Drafts and sent-from-the-memex views. */
@Injectable()
export class OutgoingQueries {
  constructor(@Inject(DATABASE) private readonly db: Kysely<MailSyncDatabase>) {}

  @RpcMethod(MailOutgoing)
  async outgoing(params: ParamsOf<typeof MailOutgoing>): Promise<ResultOf<typeof MailOutgoing>> {
    let query = this.db.selectFrom('outgoing').selectAll();
    if (params.state) query = query.where('state', '=', params.state);
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(params.limit ?? 50)
      .execute();
    return {
      outgoing: rows.map((row) => ({
        id: row.id,
        account: row.account,
        state: row.state,
        subject: row.subject,
        to: row.to,
        message_id: row.message_id,
        send_at: row.send_at?.toISOString() ?? null,
        gmail_id: row.gmail_id,
        created_at: row.created_at.toISOString(),
        error: row.error,
      })),
    };
  }
}
