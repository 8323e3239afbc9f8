import { Type } from '@sinclair/typebox';
import { defineEvent, ULID_PATTERN } from './envelope.js';

/**
 * The memex enrolled with a head: it holds a client certificate from the head's CA. Only public
 * facts are logged (the URL, the certificate's subject and fingerprints); the private key stays
 * under MEMEX_HOME.
 */
export const HeadEnrolled = defineEvent({
  type: 'head.enrolled',
  owner: 'head',
  v: 1,
  description: 'The memex enrolled with a head and holds a client certificate from its CA.',
  data: Type.Object(
    {
      url: Type.String(),
      subject: Type.String({ description: 'the client certificate’s subject, e.g. CN=memex-…,OU=memex' }),
      certificate_sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
      ca_sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
      not_after: Type.String({ format: 'date-time' }),
    },
    { additionalProperties: false },
  ),
});

export const HeadUnenrolled = defineEvent({
  type: 'head.unenrolled',
  owner: 'head',
  v: 1,
  description: 'The memex dropped its head link and erased its certificate and key.',
  data: Type.Object({ url: Type.String() }, { additionalProperties: false }),
});

/**
 * What a trigger watches for (seed §3.2): live mail (a connector's mirrored message), any new
 * item, a thing whose links changed (entity.changed: a link added or inferred to or from it, or
 * a merge into it), and an open commitment whose due time came (commitment.due).
 */
export const TriggerOn = Type.Union(
  (['mail.received', 'item.added', 'entity.changed', 'commitment.due'] as const).map((k) => Type.Literal(k)),
);

export const TriggerFilter = Type.Object(
  {
    from: Type.Optional(
      Type.String({
        description: 'mail.received: a sender address or @domain; commitment.due: who promised (or was asked)',
      }),
    ),
    to: Type.Optional(
      Type.String({ description: 'mail.received: a recipient address or @domain; commitment.due: to whom' }),
    ),
    labels: Type.Optional(Type.Array(Type.String(), { description: 'every one of these labels' })),
    source: Type.Optional(Type.String({ description: 'item.added: the item’s source kind (mbox, gmail, …)' })),
    kind: Type.Optional(
      Type.String({
        description:
          'item.added: the item kind (email, document, …); entity.changed: the thing’s kind (person, org, …)',
      }),
    ),
    thing: Type.Optional(
      Type.String({ description: 'entity.changed: the thing’s key (person:ann@example.com, topic:memex, …)' }),
    ),
    words: Type.Optional(
      Type.String({
        description: 'words the title (commitment.due: what is promised) must contain (case-insensitive)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const TriggerAction = Type.Union([
  Type.Object(
    { workflow: Type.String({ minLength: 1 }), input: Type.Optional(Type.Unknown()) },
    { additionalProperties: false },
  ),
  Type.Object(
    { notify: Type.String({ minLength: 1, description: 'the notification’s event name' }) },
    { additionalProperties: false },
  ),
]);

export const TriggerRegistered = defineEvent({
  type: 'trigger.registered',
  owner: 'head',
  v: 1,
  description:
    'The head registered an event trigger. It fires for matching events after the log position it was registered at, within its scope.',
  data: Type.Object(
    {
      id: Type.String({ pattern: ULID_PATTERN }),
      name: Type.String(),
      on: TriggerOn,
      filter: TriggerFilter,
      action: TriggerAction,
      /** The scope it was registered with: null for the owner, else the session's labels. */
      scope_labels: Type.Union([Type.Array(Type.String()), Type.Null()]),
      /** The log sequence it was registered at; it fires for later events only. */
      from_seq: Type.Integer({ minimum: 0 }),
    },
    { additionalProperties: false },
  ),
});

export const TriggerRemoved = defineEvent({
  type: 'trigger.removed',
  owner: 'head',
  v: 1,
  description: 'An event trigger was removed; it fires no more.',
  data: Type.Object({ id: Type.String({ pattern: ULID_PATTERN }) }, { additionalProperties: false }),
});

export const TriggerFired = defineEvent({
  type: 'trigger.fired',
  owner: 'head',
  v: 1,
  description:
    'A trigger fired for an event and the head acknowledged the workflow start or notification (at least once; the event id is the head’s dedupe key).',
  data: Type.Object(
    {
      trigger_id: Type.String({ pattern: ULID_PATTERN }),
      event_id: Type.String(),
      event_seq: Type.Integer({ minimum: 1 }),
      run_id: Type.Optional(Type.String()),
    },
    { additionalProperties: false },
  ),
});

export const headEvents = [HeadEnrolled, HeadUnenrolled, TriggerRegistered, TriggerRemoved, TriggerFired];
