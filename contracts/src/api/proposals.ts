import { Type } from '@sinclair/typebox';
import type { MethodDefinition } from './method.js';
import { defineMethod, Seq } from './method.js';

/** The label an agent token needs to propose mail (it can never send). */
export const MAIL_DRAFT_LABEL = 'mail.draft';

export const MailPropose = defineMethod({
  name: 'memex.mail.propose',
  service: 'mail-sync',
  kind: 'command',
  access: 'any',
  summary:
    'An agent (token labelled mail.draft) proposes a mail: new, reply, reply-all or forward of a message it can see. Nothing is sent: the proposal waits for the owner (memex.mail.approvals.decide).',
  params: Type.Object({
    account: Type.String({ minLength: 3 }),
    mode: Type.Optional(Type.Union((['new', 'reply', 'reply_all', 'forward'] as const).map((m) => Type.Literal(m)))),
    message: Type.Optional(Type.String({ minLength: 1 })),
    to: Type.Optional(Type.Array(Type.String({ minLength: 3 }), { maxItems: 100 })),
    cc: Type.Optional(Type.Array(Type.String({ minLength: 3 }), { maxItems: 100 })),
    subject: Type.Optional(Type.String({ maxLength: 998 })),
    text: Type.String(),
  }),
  result: Type.Object({ id: Type.String(), seq: Seq }),
});

export const ProposalSummary = Type.Object({
  id: Type.String(),
  account: Type.String(),
  proposer: Type.String(),
  subject: Type.String(),
  to: Type.Array(Type.String()),
  text: Type.String({ description: 'what the agent wrote (quote it: it is an agent’s text)' }),
  state: Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('rejected')]),
  outgoing_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
});

export const MailApprovalsList = defineMethod({
  name: 'memex.mail.approvals.list',
  service: 'mail-sync',
  kind: 'query',
  access: 'owner',
  summary: 'Mail proposed by agents, waiting for a decision (or all, with state), oldest first.',
  params: Type.Object({
    state: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('rejected')])),
  }),
  result: Type.Object({ proposals: Type.Array(ProposalSummary) }),
});

export const MailApprovalsDecide = defineMethod({
  name: 'memex.mail.approvals.decide',
  service: 'mail-sync',
  kind: 'command',
  access: 'owner',
  summary: 'Approve a proposed mail (it is queued and sent after the undo window) or reject it.',
  params: Type.Object({ id: Type.String({ minLength: 1 }), approve: Type.Boolean() }),
  result: Type.Object({ outgoing_id: Type.Union([Type.String(), Type.Null()]), seq: Seq }),
});

export const proposalMethods: MethodDefinition[] = [MailPropose, MailApprovalsList, MailApprovalsDecide];
