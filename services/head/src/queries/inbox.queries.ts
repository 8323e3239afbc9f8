import { Injectable } from '@nestjs/common';
import { Inbox, MailList, type ParamsOf, type ResultOf } from '@memex/contracts';
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
    if (call.scope.kind === 'agent' && !call.scope.kinds.includes('email')) return { needs_reply: [], waiting: [] };
    const [needsReply, waiting] = await Promise.all([view('needs_reply'), view('waiting')]);
    return { needs_reply: needsReply.messages, waiting: waiting.messages };
  }
}
