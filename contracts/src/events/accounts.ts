import { Type } from '@sinclair/typebox';
import { defineEvent } from './envelope.js';

/** An account is named by its address (`ann@example.com`); the subject is `account:<address>`. */
const AccountName = Type.String({ minLength: 3, maxLength: 320 });

/**
 * A Google account was connected (or connected again after a revoked grant). Its refresh token
 * never appears here: mail-sync keeps it in its encrypted token store (libs/google).
 */
export const AccountConnected = defineEvent({
  type: 'account.connected',
  owner: 'mail-sync',
  v: 1,
  description:
    'A Google account was connected with the scopes granted (mail, calendar, contacts); its secrets stay in the encrypted token store.',
  data: Type.Object(
    {
      account: AccountName,
      provider: Type.Literal('google'),
      scopes: Type.Array(Type.String()),
      client_id: Type.String({
        description: 'the OAuth client (of the user’s own Google Cloud project) the grant belongs to',
      }),
    },
    { additionalProperties: false },
  ),
});

/** Google refused the account's grant (revoked, expired, client deleted): its syncs stop until it is added again. */
export const AccountNeedsReauth = defineEvent({
  type: 'account.needs_reauth',
  owner: 'mail-sync',
  v: 1,
  description: 'Google refused the account’s grant; its syncs stopped until `memex accounts add google` is run again.',
  data: Type.Object({ account: AccountName, reason: Type.String() }, { additionalProperties: false }),
});

/** The account was removed: its grant was erased from the token store and its syncs stopped (its mail stays). */
export const AccountRemoved = defineEvent({
  type: 'account.removed',
  owner: 'mail-sync',
  v: 1,
  description: 'An account was removed; its stored grant was erased. Mail already synced stays in the memex.',
  data: Type.Object({ account: AccountName }, { additionalProperties: false }),
});

export const accountEvents = [AccountConnected, AccountNeedsReauth, AccountRemoved];
