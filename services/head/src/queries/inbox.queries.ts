import { Injectable } from '@nestjs/common';
import { CommitmentsList, Inbox, MailList, type ParamsOf, type ResultOf } from '@memex/contracts';
import { dueAt } from '../domain/triggers.js';
import { MethodRouter, RpcMethod, type CallContext } from '@memex/runtime';

@Injectable()
export class InboxQueries {
  constructor(private readonly router: MethodRouter) {}

  /** The mail views that make the head's inbox, read as the caller: a scope without mail sees none. */
  @RpcMethod(Inbox)
  async inbox(params: ParamsOf<typeof Inbox>, call: CallContext): Promise<ResultOf<typeof Inbox>> {
    const view = (name: 'needs_reply' | 'waiting') =>
      this.router.call(
        MailList.name,
        {
          view: name,
          limit: params.limit ?? 20,
          ...(name === 'waiting' ? { waiting_days: params.waiting_days ?? 3 } : {}),
        },
        call,
      ) as Promise<ResultOf<typeof MailList>>;
    const dueBy = Date.now() + (params.due_days ?? 7) * 86_400_000;
    const commitmentsDue = async () =>
      (
        (await this.router.call(CommitmentsList.name, { status: 'open', limit: 500 }, call)) as ResultOf<
          typeof CommitmentsList
        >
      ).commitments
        .filter((c) => c.due !== null && (dueAt(c.due)?.getTime() ?? Infinity) <= dueBy)
        .slice(0, params.limit ?? 20);
    if (call.scope.kind === 'agent' && !call.scope.kinds.includes('email')) {
      return { needs_reply: [], waiting: [], commitments_due: await commitmentsDue() };
    }
    const [needsReply, waiting, due] = await Promise.all([view('needs_reply'), view('waiting'), commitmentsDue()]);
    return { needs_reply: needsReply.messages, waiting: waiting.messages, commitments_due: due };
  }
}
