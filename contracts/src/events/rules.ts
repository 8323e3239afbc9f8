import { Type } from '@sinclair/typebox';
import { defineEvent, ULID_PATTERN } from './envelope.js';

/** What a mail rule does to a message that matches. */
export const RuleActions = Type.Object(
  {
    add_labels: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 20 })),
    archive: Type.Optional(Type.Boolean()),
    star: Type.Optional(Type.Boolean()),
    mark_read: Type.Optional(Type.Boolean()),
    forward_to: Type.Optional(Type.String({ minLength: 3, maxLength: 320 })),
  },
  { additionalProperties: false },
);

/** A mail rule (the user's filter): new mail matching `query` gets `actions`, rules in `position` order. Subject rule:<id>. */
export const RuleAdded = defineEvent({
  type: 'rule.added',
  owner: 'mail-sync',
  v: 1,
  description:
    'A mail rule was added: new mail matching its query (from:, to:, subject words, label:) gets its actions.',
  data: Type.Object(
    {
      id: Type.String({ pattern: ULID_PATTERN }),
      name: Type.String(),
      query: Type.String({ minLength: 1 }),
      actions: RuleActions,
      position: Type.Integer({ minimum: 0 }),
    },
    { additionalProperties: false },
  ),
});

export const RuleRemoved = defineEvent({
  type: 'rule.removed',
  owner: 'mail-sync',
  v: 1,
  description: 'A mail rule was removed; mail it already acted on keeps what it did.',
  data: Type.Object({ id: Type.String({ pattern: ULID_PATTERN }) }, { additionalProperties: false }),
});

/** A rule acted on one new message: logged once per rule and message (the record that it never acts twice). Subject item:<id>. */
export const RuleApplied = defineEvent({
  type: 'rule.applied',
  owner: 'mail-sync',
  v: 1,
  description:
    'A mail rule acted on a new message (its actions follow as mail.flags_changed and, for a forward, outgoing.queued).',
  data: Type.Object(
    {
      rule_id: Type.String({ pattern: ULID_PATTERN }),
      item_id: Type.String({ pattern: ULID_PATTERN }),
      actions: RuleActions,
    },
    { additionalProperties: false },
  ),
});

export const ruleEvents = [RuleAdded, RuleRemoved, RuleApplied];
