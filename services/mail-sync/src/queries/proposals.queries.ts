import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { MailApprovalsList, type ParamsOf, type ResultOf } from '@memex/contracts';
import { BlobStore } from '@memex/blobs';
import { DATABASE, RpcMethod } from '@memex/runtime';
import type { MailSyncDatabase } from '../projection/schema.js';

/** memex.mail.approvals.list: the approval queue. */
@Injectable()
export class ProposalsQueries {
  constructor(
    @Inject(DATABASE) private readonly db: Kysely<MailSyncDatabase>,
    private readonly blobs: BlobStore,
  ) {}

  @RpcMethod(MailApprovalsList)
  async list(params: ParamsOf<typeof MailApprovalsList>): Promise<ResultOf<typeof MailApprovalsList>> {
    const rows = await this.db
      .selectFrom('proposals')
      .selectAll()
      .where('state', '=', params.state ?? 'pending')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return {
      proposals: await Promise.all(
        rows.map(async (row) => ({
          id: row.id,
          account: row.account,
          proposer: row.proposer,
          subject: row.subject,
          to: row.to,
          text: (JSON.parse((await this.blobs.get(row.request_sha256)).toString('utf8')) as { text: string }).text,
          state: row.state,
          outgoing_id: row.outgoing_id,
          created_at: row.created_at.toISOString(),
        })),
      ),
    };
  }
}
