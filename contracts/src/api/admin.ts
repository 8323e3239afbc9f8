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
    /** Where the seconds went: the bulk load, building its dropped indexes again, the last catch-up and the switch. */
    phases: Type.Object({ bulk_load: Type.Number(), indexes: Type.Number(), switch: Type.Number() }),
  }),
});

const ProjectorParam = Type.Optional(
  Type.Union(
    ServiceNames.map((name) => Type.Literal(name)),
    { description: 'one service’s projector; every service’s when left out' },
  ),
);

const ProjectorFailure = Type.Object({
  projector: Type.String(),
  seq: Type.Integer({ description: 'the failed event’s sequence in the log' }),
  event_type: Type.String(),
  subject: Type.Union([Type.String(), Type.Null()], { description: 'what the event is about (item:<id>, …)' }),
  error: Type.String({ description: 'why it failed, as the projector said' }),
  failed_at: Type.String({ format: 'date-time' }),
  attempts: Type.Integer({ minimum: 1 }),
});

/** Events a projector could not apply: recorded and skipped so the rest goes on, never silent. */
export const AdminFailures = defineMethod({
  name: 'memex.admin.failures',
  service: 'gateway',
  kind: 'query',
  access: 'owner',
  summary: 'List the events that projectors failed to apply (recorded and skipped), with the reason.',
  params: Type.Object({ projector: ProjectorParam }),
  result: Type.Object({ failures: Type.Array(ProjectorFailure) }),
});

/** Applies failed events again, after a fix; what still fails stays listed with the new reason. */
export const AdminFailuresRetry = defineMethod({
  name: 'memex.admin.failures.retry',
  service: 'gateway',
  kind: 'command',
  access: 'owner',
  summary: 'Apply failed events again (all, or the sequences given); answers what was fixed and what still fails.',
  params: Type.Object({
    projector: ProjectorParam,
    seqs: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { description: 'only these sequences' })),
  }),
  result: Type.Object({
    results: Type.Array(
      Type.Object({
        projector: Type.String(),
        retried: Type.Integer(),
        fixed: Type.Array(Type.Integer()),
        gone: Type.Array(Type.Integer(), { description: 'events erased from the log since (item deleted)' }),
        failing: Type.Array(ProjectorFailure),
      }),
    ),
  }),
});
