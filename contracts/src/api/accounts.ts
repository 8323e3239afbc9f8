import { Type } from '@sinclair/typebox';
import type { MethodDefinition } from './method.js';
import { defineMethod, Seq } from './method.js';

export const AccountStatus = Type.Union([Type.Literal('active'), Type.Literal('needs_reauth')]);

export const AccountsAdd = defineMethod({
  name: 'memex.accounts.add',
  service: 'mail-sync',
  kind: 'command',
  access: 'owner',
  summary:
    'Connect a Google account from a grant the CLI obtained (`memex accounts add google`: browser consent, or a refresh token file on a headless server). The refresh token goes to the encrypted token store, never to the log.',
  params: Type.Object({
    provider: Type.Literal('google'),
    client_id: Type.String({ minLength: 1 }),
    client_secret: Type.String({ minLength: 1 }),
    refresh_token: Type.String({ minLength: 1 }),
    scopes: Type.Optional(Type.Array(Type.String(), { description: 'the scopes granted, when known' })),
  }),
  result: Type.Object({ account: Type.String({ description: 'the Google address the grant belongs to' }), seq: Seq }),
});

export const AccountsAddImap = defineMethod({
  name: 'memex.accounts.imap.add',
  service: 'mail-sync',
  kind: 'command',
  access: 'owner',
  summary:
    'Connect a plain IMAP/SMTP account (`memex accounts add imap`): the login is checked with the IMAP server, the password goes to the encrypted store, never to the log. Without a password, mail-sync asks the credentials provider for imap:<account>.',
  params: Type.Object({
    account: Type.Optional(Type.String({ minLength: 3, description: 'the address; the user name when not given' })),
    host: Type.String({ minLength: 1 }),
    port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: 'default 993 (TLS) or 143' })),
    tls: Type.Optional(
      Type.Boolean({ default: true, description: 'TLS from the start; false: STARTTLS when offered' }),
    ),
    user: Type.String({ minLength: 1 }),
    password: Type.Optional(Type.String({ minLength: 1 })),
    smtp_host: Type.Optional(Type.String({ minLength: 1, description: 'default: the IMAP host' })),
    smtp_port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: 'default 465 (TLS) or 587' })),
    smtp_tls: Type.Optional(Type.Boolean({ description: 'default: as tls' })),
  }),
  result: Type.Object({ account: Type.String(), seq: Seq }),
});

export const AccountSummary = Type.Object({
  account: Type.String(),
  provider: Type.Union([Type.Literal('google'), Type.Literal('imap')]),
  status: AccountStatus,
  reason: Type.Union([Type.String(), Type.Null()], { description: 'why it needs a new consent' }),
  scopes: Type.Array(Type.String()),
  connected_at: Type.String(),
  sync: Type.Object({
    phase: Type.Union([Type.Literal('full'), Type.Literal('incremental'), Type.Literal('not_started')]),
    messages: Type.Integer({ description: 'messages mirrored' }),
    history_id: Type.Union([Type.String(), Type.Null()]),
    last_progress_at: Type.Union([Type.String(), Type.Null()]),
    /** Set while its sync fails (the provider down, an error), with why and since when; tried again each interval. */
    failing: Type.Union([Type.Object({ reason: Type.String(), since: Type.String() }), Type.Null()]),
  }),
});

export const AccountsList = defineMethod({
  name: 'memex.accounts.list',
  service: 'mail-sync',
  kind: 'query',
  access: 'owner',
  summary: 'Connected accounts with their status (active, needs_reauth) and how far their mail sync has come.',
  params: Type.Object({}),
  result: Type.Object({ accounts: Type.Array(AccountSummary) }),
});

export const AccountsRemove = defineMethod({
  name: 'memex.accounts.remove',
  service: 'mail-sync',
  kind: 'command',
  access: 'owner',
  summary:
    'Disconnect an account: its grant is erased from the token store and its syncs stop; mail already synced stays.',
  params: Type.Object({ account: Type.String({ minLength: 1 }) }),
  result: Type.Object({ seq: Seq }),
});

export const AccountsSync = defineMethod({
  name: 'memex.accounts.sync',
  service: 'mail-sync',
  kind: 'command',
  access: 'owner',
  summary:
    'Poll Gmail now (every account, or one) instead of waiting for the next interval; answers once the poll is done.',
  params: Type.Object({ account: Type.Optional(Type.String({ minLength: 1 })) }),
  result: Type.Object({ synced: Type.Array(Type.String()), seq: Seq }),
});

/**
 * Internal (not in the gateway's catalog): a short-lived access token for a service that calls
 * Google for an account (calendar-sync), so no other service reads the token store. Answers the
 * error `forbidden` with "needs_reauth" in its message when the grant was revoked.
 */
export const AccountsToken = defineMethod({
  name: 'memex.accounts.token',
  service: 'mail-sync',
  kind: 'query',
  access: 'owner',
  summary: 'A short-lived access token for an account and a scope (mail, calendar, contacts). Internal.',
  params: Type.Object({
    account: Type.String({ minLength: 1 }),
    scope: Type.Union([Type.Literal('mail'), Type.Literal('calendar'), Type.Literal('contacts')]),
  }),
  result: Type.Object({
    access_token: Type.String(),
    expiry_date: Type.Integer({ description: 'ms since the epoch' }),
  }),
});

/** API methods of the accounts area (AccountsToken is internal and deliberately absent). */
export const accountMethods: MethodDefinition[] = [
  AccountsAdd,
  AccountsAddImap,
  AccountsList,
  AccountsRemove,
  AccountsSync,
];
