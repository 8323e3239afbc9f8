import { Type } from '@sinclair/typebox';
import { defineMethod, Seq } from './method.js';

export const TokensCreate = defineMethod({
  name: 'memex.tokens.create',
  service: 'gateway',
  kind: 'command',
  access: 'owner',
  summary: 'Create a scoped agent token. The secret is shown once, in this answer.',
  params: Type.Object({
    name: Type.Optional(Type.String({ maxLength: 200 })),
    labels: Type.Array(Type.String({ minLength: 1, pattern: '^[^\\s,]+$' }), { maxItems: 50 }),
  }),
  result: Type.Object({ id: Type.String(), token: Type.String(), labels: Type.Array(Type.String()), seq: Seq }),
});

export const TokenSummary = Type.Object({
  id: Type.String(),
  name: Type.String(),
  labels: Type.Array(Type.String()),
  created_at: Type.String(),
  revoked_at: Type.Union([Type.String(), Type.Null()]),
});

export const TokensList = defineMethod({
  name: 'memex.tokens.list',
  service: 'gateway',
  kind: 'query',
  access: 'owner',
  summary: 'Agent tokens, newest first (never their secrets).',
  params: Type.Object({}),
  result: Type.Object({ tokens: Type.Array(TokenSummary) }),
});

export const TokensRevoke = defineMethod({
  name: 'memex.tokens.revoke',
  service: 'gateway',
  kind: 'command',
  access: 'owner',
  summary: 'Revoke an agent token.',
  params: Type.Object({ id: Type.String({ minLength: 1 }) }),
  result: Type.Object({ seq: Seq }),
});
