import { Type } from '@sinclair/typebox';
import { defineEvent, ULID_PATTERN } from './envelope.js';

/**
 * An agent (a token with the `mail.draft` label) proposed a mail; it waits for the owner's
 * decision and is never sent without it. What it asks for (the compose request) is a blob.
 * Subject proposal:<id>.
 */
export const ProposalCreated = defineEvent({
  type: 'proposal.created',
  owner: 'mail-sync',
  v: 1,
  description: 'An agent proposed a mail to send; it waits in the approval queue.',
  data: Type.Object(
    {
      id: Type.String({ pattern: ULID_PATTERN }),
      account: Type.String({ minLength: 3 }),
      proposer: Type.String({ description: 'the actor that proposed it (token:<id>)' }),
      request_sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
      subject: Type.String(),
      to: Type.Array(Type.String()),
    },
    { additionalProperties: false },
  ),
});

export const ProposalDecided = defineEvent({
  type: 'proposal.decided',
  owner: 'mail-sync',
  v: 1,
  description: 'The owner approved a proposed mail (it is queued as outgoing_id) or rejected it.',
  data: Type.Object(
    {
      id: Type.String({ pattern: ULID_PATTERN }),
      approved: Type.Boolean(),
      outgoing_id: Type.Union([Type.String({ pattern: ULID_PATTERN }), Type.Null()]),
    },
    { additionalProperties: false },
  ),
});

export const proposalEvents = [ProposalCreated, ProposalDecided];
