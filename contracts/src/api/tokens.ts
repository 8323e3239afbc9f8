import { Type } from '@sinclair/typebox';
import { defineMethod, Seq } from './method.js';
import { ScopeRule } from '../scope.js';

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

/** Where the rules in force come from: set through memex.scopes.set, `$MEMEX_HOME/scopes.json`, or the defaults. */
const ScopeRulesFrom = Type.Union([Type.Literal('set'), Type.Literal('file'), Type.Literal('defaults')]);

export const ScopesGet = defineMethod({
  name: 'memex.scopes.get',
  service: 'gateway',
  kind: 'query',
  access: 'owner',
  summary:
    'The scope rules in force (which label opens which item kinds to agent tokens), where they come from, and the item kinds each agent token sees under them.',
  params: Type.Object({}),
  result: Type.Object({
    rules: Type.Array(ScopeRule),
    from: ScopeRulesFrom,
    tokens: Type.Array(Type.Object({ id: Type.String(), kinds: Type.Array(Type.String()) })),
  }),
});

export const ScopesSet = defineMethod({
  name: 'memex.scopes.set',
  service: 'gateway',
  kind: 'command',
  access: 'owner',
  summary:
    'Replace the scope rules: each `{when, kinds}` opens those item kinds to agent tokens labelled `when` (`*`: every token). Logged, so a replay keeps them; they take the place of scopes.json.',
  params: Type.Object({
    rules: Type.Array(
      Type.Object(
        {
          when: Type.String({ minLength: 1, pattern: '^[^\\s,]+$' }),
          kinds: Type.Array(Type.String({ minLength: 1, pattern: '^[a-z][a-z0-9_]*$' }), { maxItems: 50 }),
        },
        { additionalProperties: false },
      ),
      { maxItems: 100 },
    ),
  }),
  result: Type.Object({ seq: Seq }),
});
