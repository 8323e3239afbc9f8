import { Type } from '@sinclair/typebox';
import { defineMethod, ServiceNames } from './method.js';

/** Rebuilds a service's read model from the log beside the live one, then switches. */
export const AdminReplay = defineMethod({
  name: 'memex.admin.replay',
  service: 'gateway',
  kind: 'command',
  access: 'owner',
  summary:
    'Rebuild a projector’s read model from sequence 1 into a fresh schema, switch when caught up, and report events/s.',
  params: Type.Object({
    projector: Type.Union(
      ServiceNames.map((name) => Type.Literal(name)),
      { description: 'the service whose read model to rebuild' },
    ),
  }),
  result: Type.Object({
    projector: Type.String(),
    events: Type.Integer(),
    seconds: Type.Number(),
    events_per_second: Type.Number(),
    last_seq: Type.Integer(),
  }),
});
