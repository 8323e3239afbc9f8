import { Type } from '@sinclair/typebox';
import type { MethodDefinition } from './method.js';
import { defineMethod, Seq } from './method.js';
import { RuleActions } from '../events/rules.js';

export const RuleSummary = Type.Object({
  id: Type.String(),
  name: Type.String(),
  query: Type.String(),
  actions: RuleActions,
  position: Type.Integer(),
  applied: Type.Integer({ description: 'messages it has acted on' }),
});

export const RulesAdd = defineMethod({
  name: 'memex.rules.add',
  service: 'mail-sync',
  kind: 'command',
  access: 'owner',
  summary:
    'Add a mail rule: new synced mail matching the query (memex.search’s syntax: words, "phrases", prefix*, -exclusions, from:, to:, label:, kind:, source:, before:, after:) is labelled, archived, starred, marked read or forwarded, once, rules in order.',
  params: Type.Object({
    query: Type.String({ minLength: 1, maxLength: 1000 }),
    actions: RuleActions,
    name: Type.Optional(Type.String({ maxLength: 200 })),
  }),
  result: Type.Object({ id: Type.String(), seq: Seq }),
});

export const RulesList = defineMethod({
  name: 'memex.rules.list',
  service: 'mail-sync',
  kind: 'query',
  access: 'owner',
  summary: 'The mail rules in the order they apply.',
  params: Type.Object({}),
  result: Type.Object({ rules: Type.Array(RuleSummary) }),
});

export const RulesRemove = defineMethod({
  name: 'memex.rules.remove',
  service: 'mail-sync',
  kind: 'command',
  access: 'owner',
  summary: 'Remove a mail rule.',
  params: Type.Object({ id: Type.String({ minLength: 1 }) }),
  result: Type.Object({ seq: Seq }),
});

export const RulesTest = defineMethod({
  name: 'memex.rules.test',
  service: 'mail-sync',
  kind: 'query',
  access: 'owner',
  summary:
    'Dry run: the existing messages a query would match (found through memex.search, judged as new mail would be; newest first), and what the actions would change; nothing is changed.',
  params: Type.Object({
    query: Type.String({ minLength: 1, maxLength: 1000 }),
    actions: Type.Optional(RuleActions),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  }),
  result: Type.Object({
    matches: Type.Array(
      Type.Object({
        id: Type.String(),
        subject: Type.String(),
        from: Type.String(),
        date: Type.String(),
        would_change: Type.Array(Type.String()),
      }),
    ),
    scanned: Type.Integer(),
  }),
});

export const ruleMethods: MethodDefinition[] = [RulesAdd, RulesList, RulesRemove, RulesTest];
