import { Type } from '@sinclair/typebox';
import { defineEvent, ULID_PATTERN } from './envelope.js';
import { ScopeRule } from '../scope.js';

/** An agent token; only its SHA-256 is ever logged. */
export const TokenCreated = defineEvent({
  type: 'token.created',
  owner: 'gateway',
  v: 1,
  description: 'A scoped agent token was created. Only the SHA-256 of the secret is recorded.',
  data: Type.Object(
    {
      id: Type.String({ pattern: ULID_PATTERN }),
      name: Type.String(),
      labels: Type.Array(Type.String({ minLength: 1 })),
      sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    },
    { additionalProperties: false },
  ),
});

export const TokenRevoked = defineEvent({
  type: 'token.revoked',
  owner: 'gateway',
  v: 1,
  description: 'An agent token was revoked; calls with it are refused from now on.',
  data: Type.Object({ id: Type.String({ pattern: ULID_PATTERN }) }, { additionalProperties: false }),
});

/**
 * The owner set the scope rules: which labels open which item kinds to agent tokens. The last one
 * logged is in force, in place of `$MEMEX_HOME/scopes.json` and the defaults. Subject scope_rules:all.
 */
export const ScopeRulesSet = defineEvent({
  type: 'scope_rules.set',
  owner: 'gateway',
  v: 1,
  description:
    'The owner set the scope rules (label → item kinds an agent token with it sees); they replace scopes.json and the defaults. Subject scope_rules:all.',
  data: Type.Object({ rules: Type.Array(ScopeRule, { maxItems: 100 }) }, { additionalProperties: false }),
});

export const tokenEvents = [TokenCreated, TokenRevoked, ScopeRulesSet];
