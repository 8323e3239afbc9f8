import { fileURLToPath } from 'node:url';
import { Type } from '@sinclair/typebox';
import { TriggerAction, TriggerFilter, TriggerOn } from '../events/head.js';
import { MailSummary } from './mail.js';
import { CommitmentView } from './understanding.js';
import { defineMethod, Seq, type MethodDefinition } from './method.js';

export const HeadEnroll = defineMethod({
  name: 'memex.head.enroll',
  service: 'head',
  kind: 'command',
  access: 'owner',
  summary:
    'Enroll with a head: make a key pair, send a certificate signing request with the head’s one-time token, keep the client certificate (role memex) and the CA certificate under MEMEX_HOME, then dial the head. Enrolling again replaces the old link (moving the memex to another machine).',
  params: Type.Object({
    url: Type.String({ description: 'the head’s enrollment address, e.g. https://head.example:8443' }),
    token: Type.String({ minLength: 1, description: 'the one-time enrollment token the head gave' }),
    ca_sha256: Type.Optional(
      Type.String({
        pattern: '^[0-9a-f]{64}$',
        description: 'the SHA-256 of the head’s CA certificate (DER), to pin it instead of trusting it on first use',
      }),
    ),
  }),
  result: Type.Object({
    subject: Type.String(),
    not_after: Type.String(),
    ca_sha256: Type.String(),
    link_url: Type.String({ description: 'where the memex dials the head’s link' }),
    seq: Seq,
  }),
});

export const HeadLinkStatus = Type.Object({
  enrolled: Type.Boolean(),
  url: Type.Union([Type.String(), Type.Null()]),
  subject: Type.Union([Type.String(), Type.Null()]),
  not_after: Type.Union([Type.String(), Type.Null()]),
  state: Type.Union(
    (['not_enrolled', 'connecting', 'connected', 'backing_off', 'refused'] as const).map((s) => Type.Literal(s)),
  ),
  /** Why the last connection ended or was refused. */
  last_error: Type.Union([Type.String(), Type.Null()]),
  connected_since: Type.Union([Type.String(), Type.Null()]),
  reconnects: Type.Integer(),
  calls_relayed: Type.Integer(),
  last_heartbeat: Type.Union([Type.String(), Type.Null()]),
});

export const HeadStatus = defineMethod({
  name: 'memex.head.status',
  service: 'head',
  kind: 'query',
  access: 'owner',
  summary: 'The head link: enrolled or not, the certificate, the stream’s state and its last error.',
  params: Type.Object({}),
  result: HeadLinkStatus,
});

export const HeadUnenroll = defineMethod({
  name: 'memex.head.unenroll',
  service: 'head',
  kind: 'command',
  access: 'owner',
  summary: 'Close the head link and erase the certificate and key.',
  params: Type.Object({}),
  result: Type.Object({ seq: Seq }),
});

export const Trigger = Type.Object({
  id: Type.String(),
  name: Type.String(),
  on: TriggerOn,
  filter: TriggerFilter,
  action: TriggerAction,
  scope_labels: Type.Union([Type.Array(Type.String()), Type.Null()]),
  fired: Type.Integer({ description: 'how many events it fired for' }),
  last_fired_at: Type.Union([Type.String(), Type.Null()]),
});

export const TriggersAdd = defineMethod({
  name: 'memex.triggers.add',
  service: 'head',
  kind: 'command',
  access: 'any',
  summary:
    'Register an event trigger (seed §3.2): on mail.received (live mail) or item.added, with filters, start a workflow on the head or notify. It fires at least once per matching event after now, deduplicated by the event id, and only for events the caller’s scope can see.',
  params: Type.Object({
    name: Type.String({ minLength: 1, maxLength: 200 }),
    on: TriggerOn,
    filter: Type.Optional(TriggerFilter),
    action: TriggerAction,
  }),
  result: Type.Object({ id: Type.String(), seq: Seq }),
});

export const TriggersList = defineMethod({
  name: 'memex.triggers.list',
  service: 'head',
  kind: 'query',
  access: 'any',
  summary: 'The triggers the caller’s scope registered (the owner sees all).',
  params: Type.Object({}),
  result: Type.Object({ triggers: Type.Array(Trigger) }),
});

export const TriggersRemove = defineMethod({
  name: 'memex.triggers.remove',
  service: 'head',
  kind: 'command',
  access: 'any',
  summary: 'Remove a trigger (one registered with the caller’s scope; the owner may remove any).',
  params: Type.Object({ id: Type.String({ minLength: 1 }) }),
  result: Type.Object({ seq: Seq }),
});

export const Inbox = defineMethod({
  name: 'memex.inbox',
  service: 'head',
  kind: 'query',
  access: 'any',
  summary:
    'What waits for the person, for the head’s inbox (seed §3.2): conversations whose last message is to me and unanswered, those I wrote last without an answer for `waiting_days`, and open commitments due within `due_days` (or overdue), within the caller’s scope (mail needs the label mail).',
  params: Type.Object({
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 20 })),
    waiting_days: Type.Optional(Type.Integer({ minimum: 0, maximum: 3650, default: 3 })),
    due_days: Type.Optional(Type.Integer({ minimum: 0, maximum: 3650, default: 7 })),
  }),
  result: Type.Object({
    needs_reply: Type.Array(MailSummary),
    waiting: Type.Array(MailSummary),
    commitments_due: Type.Array(CommitmentView, { description: 'open commitments with a due date, soonest first' }),
  }),
});

export const HeadMemory = Type.Object({
  about: Type.String({
    minLength: 1,
    maxLength: 500,
    description: 'what it is about: a thing’s key (org:acme.example, person:…) or words',
  }),
  text: Type.String({ minLength: 1, maxLength: 20_000 }),
  forgotten: Type.Optional(
    Type.Boolean({ description: 'the head forgot it: the note is deleted if the memex has it' }),
  ),
  session: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'the session that remembered it' })),
  labels: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 50 })),
});

export const HeadMemoriesImport = defineMethod({
  name: 'memex.head.memories.import',
  service: 'head',
  kind: 'command',
  access: 'owner',
  summary:
    'Import the head’s existing memories table (its JSON export, `memex head import-memories FILE`): each memory becomes a note on its thing (linked about it when `about` is a key, part_of its session when named), with the same id a remember of it over the link gives, so importing twice or later forgetting it over the link finds the same note. A bad row is answered with its reason; the others go in.',
  params: Type.Object({ memories: Type.Array(HeadMemory, { minItems: 1, maxItems: 1000 }) }),
  result: Type.Object({
    remembered: Type.Array(Type.Object({ index: Type.Integer(), note: Type.String() })),
    forgotten: Type.Integer(),
    rejected: Type.Array(Type.Object({ index: Type.Integer(), reason: Type.String() })),
  }),
});

/**
 * Internal (not in the gateway's catalog, so neither a client nor the head's relayed calls reach
 * it): a short-lived secret the head holds for a name ("model:openai", "imap:fastmail"), asked
 * over the link with `credentials.get`. Answers `not_found` when no head is enrolled or the head
 * has no such credential, `unavailable` while the enrolled link is down. Read it through
 * `@memex/credentials`, never directly; the memex never stores what it answers.
 */
export const HeadCredentialsGet = defineMethod({
  name: 'memex.head.credentials',
  service: 'head',
  kind: 'query',
  access: 'owner',
  summary: 'A short-lived credential from the enrolled head (credentials.get). Internal.',
  params: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }),
  result: Type.Object({
    secret: Type.String(),
    expires_at_ms: Type.Integer({ description: 'ms since the epoch' }),
  }),
});

export const headMethods: MethodDefinition[] = [
  HeadEnroll,
  HeadStatus,
  HeadUnenroll,
  TriggersAdd,
  TriggersList,
  TriggersRemove,
  Inbox,
  HeadMemoriesImport,
];

/** contracts/api/head.proto: the link's frames and the five head methods (docs/head.md). */
export const HEAD_PROTO_PATH = fileURLToPath(new URL('../../api/head.proto', import.meta.url));
