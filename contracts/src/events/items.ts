import { Type } from '@sinclair/typebox';
import { defineEvent, ULID_PATTERN } from './envelope.js';

/**
 * A note: an insight or a remark written by the owner or an agent. Put again with the same id
 * to replace its body (its earlier versions are superseded, not kept as separate items).
 */
export const NotePut = defineEvent({
  type: 'note.put',
  v: 1,
  description: 'A note was written or replaced. Subject item:<id>; who wrote it is the actor.',
  data: Type.Object(
    {
      id: Type.String({ pattern: ULID_PATTERN }),
      title: Type.String(),
      body: Type.String(),
      /** Set when this put replaced an earlier version. */
      replaces: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
});

/** An item is gone with everything derived from it; its earlier events have been erased from the log. */
export const ItemDeleted = defineEvent({
  type: 'item.deleted',
  v: 1,
  description:
    'An item was deleted. Every read model drops it and all that derives from it; events about it that arrive later are ignored.',
  data: Type.Object(
    {
      id: Type.String({ pattern: ULID_PATTERN }),
    },
    { additionalProperties: false },
  ),
});
