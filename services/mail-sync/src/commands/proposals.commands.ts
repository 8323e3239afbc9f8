import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import {
  MAIL_DRAFT_LABEL,
  MailApprovalsDecide,
  MailPropose,
  MailThread,
  MemexError,
  ProposalCreated,
  ProposalDecided,
  rpcSubject,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { BlobStore } from '@memex/blobs';
import { callRpc, EventPublisher, newId, type Bus } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { BUS, CONFIG, DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import type { MailSyncDatabase } from '../projection/schema.js';
import { Outbox } from '../sync/outbox.js';
import { OutgoingCommands } from './outgoing.commands.js';

/**
 * Agents propose, the owner decides (seed §6.6): a token labelled mail.draft may propose a
 * mail about what it can see, never send one. An approved proposal is queued under its own id,
 * so approving twice (a retry after a crash) queues it once.
 */
@Injectable()
export class ProposalsCommands {
  constructor(
    @Inject(DATABASE) private readonly db: Kysely<MailSyncDatabase>,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(CONFIG) private readonly config: MemexConfig,
    private readonly publisher: EventPublisher,
    private readonly blobs: BlobStore,
    private readonly outbox: Outbox,
    private readonly outgoing: OutgoingCommands,
  ) {}

  @RpcMethod(MailPropose)
  async propose(params: ParamsOf<typeof MailPropose>, call: CallContext): Promise<ResultOf<typeof MailPropose>> {
    if (call.scope.kind === 'agent' && !call.scope.labels.includes(MAIL_DRAFT_LABEL)) {
      throw new MemexError('forbidden', `proposing mail needs a token labelled ${MAIL_DRAFT_LABEL}`);
    }
    if ((params.mode ?? 'new') !== 'new') {
      if (!params.message)
        throw new MemexError('invalid_params', `params.message: a ${params.mode} needs the message it answers`);
      // The agent answers only what it may see.
      await callRpc(
        this.bus,
        rpcSubject(MailThread),
        { method: MailThread.name, params: { id: params.message }, scope: call.scope, caller: call.caller },
        this.config.rpcTimeoutMs,
      );
    } else if (!params.to?.length) {
      throw new MemexError('invalid_params', 'params.to: a new mail needs a recipient');
    }
    await this.outbox.caughtUp();
    const account = await this.db
      .selectFrom('accounts')
      .select('account')
      .where('account', '=', params.account)
      .executeTakeFirst();
    if (!account) throw new MemexError('not_found', `no connected account ${params.account}`);
    const id = newId();
    const sha = await this.blobs.put(Buffer.from(JSON.stringify(params)));
    const { seq } = await this.publisher.publish(ProposalCreated, {
      subject: `proposal:${id}`,
      actor: call.caller,
      data: {
        id,
        account: params.account,
        proposer: call.caller.id,
        request_sha256: sha,
        subject: params.subject ?? '',
        to: params.to ?? [],
      },
    });
    return { id, seq };
  }

  @RpcMethod(MailApprovalsDecide)
  async decide(
    params: ParamsOf<typeof MailApprovalsDecide>,
    call: CallContext,
  ): Promise<ResultOf<typeof MailApprovalsDecide>> {
    await this.outbox.caughtUp();
    const proposal = await this.db.selectFrom('proposals').selectAll().where('id', '=', params.id).executeTakeFirst();
    if (!proposal) throw new MemexError('not_found', `no proposal ${params.id}`);
    if (proposal.state !== 'pending')
      throw new MemexError('conflict', `proposal ${params.id} was already ${proposal.state}`);
    let outgoingId: string | null = null;
    if (params.approve) {
      const request = JSON.parse((await this.blobs.get(proposal.request_sha256)).toString('utf8')) as ParamsOf<
        typeof MailPropose
      >;
      outgoingId = proposal.id;
      try {
        await this.outgoing.queue(request, call.caller, outgoingId);
      } catch (error) {
        // Queued by an earlier attempt at this decision that did not get to log it.
        if (!(error instanceof MemexError && error.code === 'conflict')) throw error;
      }
    }
    const { seq } = await this.publisher.publish(ProposalDecided, {
      subject: `proposal:${params.id}`,
      actor: call.caller,
      data: { id: params.id, approved: params.approve, outgoing_id: outgoingId },
    });
    return { outgoing_id: outgoingId, seq };
  }
}
