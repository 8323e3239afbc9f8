import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  ALL_GOOGLE_SCOPES,
  authorizeInstalledApp,
  brokeredAuth,
  gmailApi,
  GrantRevokedError,
  oauthClient,
  parseClientSecrets,
  refreshAccessToken,
  retryDelayMs,
  TokenStore,
  withRetry,
} from './index.js';
import { FakeGmail, FakeGoogleServer } from './testing/index.js';

async function fakeGoogle(): Promise<{ google: FakeGoogleServer; gmail: FakeGmail }> {
  const google = await new FakeGoogleServer().start();
  return { google, gmail: new FakeGmail(google) };
}

test('the token store keeps grants encrypted under a 0600 key, bound to their account, and erases them', () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-google-'));
  const store = new TokenStore(home);
  const grant = {
    account: 'ann@example.com',
    client: { clientId: 'c', clientSecret: 's' },
    refreshToken: '1//secret-refresh',
    scopes: ['x'],
  };
  store.put(grant);
  assert.deepEqual(store.get('ann@example.com'), grant);
  assert.equal(fs.statSync(store.keyFile).mode & 0o777, 0o600);
  const files = fs.readdirSync(path.join(home, 'google', 'grants'));
  assert.equal(files.length, 1);
  const sealed = fs.readFileSync(path.join(home, 'google', 'grants', files[0]!));
  assert.equal(sealed.includes('secret-refresh'), false, 'the refresh token is not in clear on disk');
  // A grant file moved to another account's name does not decrypt (the account is authenticated data).
  const other = new TokenStore(home);
  fs.copyFileSync(
    path.join(home, 'google', 'grants', files[0]!),
    path.join(home, 'google', 'grants', `${createHash('sha256').update('bob@example.com').digest('hex')}.enc`),
  );
  assert.throws(() => other.get('bob@example.com'), /does not decrypt/);
  assert.equal(store.remove('ann@example.com'), true);
  assert.equal(store.get('ann@example.com'), undefined);
  assert.equal(store.remove('ann@example.com'), false);
  fs.chmodSync(store.keyFile, 0o644);
  assert.throws(() => new TokenStore(home).put(grant), /readable by others/);
});

test('another kind of secret (an IMAP password) is sealed the same way in a folder of its own', () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-google-'));
  const passwords = new TokenStore<{ account: string; password: string }>(home, 'imap');
  passwords.put({ account: 'ann@example.com', password: 'imap-secret' });
  assert.deepEqual(passwords.get('ann@example.com'), { account: 'ann@example.com', password: 'imap-secret' });
  const [file] = fs.readdirSync(path.join(home, 'imap', 'grants'));
  assert.equal(fs.readFileSync(path.join(home, 'imap', 'grants', file!)).includes('imap-secret'), false);
  assert.equal(new TokenStore(home).get('ann@example.com'), undefined, 'not among the Google grants');
});

test("client secrets in Google's downloaded format are read; anything else is named", () => {
  assert.deepEqual(parseClientSecrets({ installed: { client_id: 'id', client_secret: 'sec' } }), {
    clientId: 'id',
    clientSecret: 'sec',
  });
  assert.throws(
    () => parseClientSecrets({ client_id: 'id' }, 'x.json'),
    /x\.json: expected Google's client secrets format/,
  );
});

test('retry: backoff with jitter under a cap, never sooner than Retry-After; only 429, rate-limit 403 and 5xx', async () => {
  const rateLimited = { response: { status: 429, headers: { 'retry-after': '7' } } };
  assert.equal(retryDelayMs(rateLimited, 1, { baseMs: 100, maxMs: 1000, random: () => 0 }), 7000);
  assert.equal(retryDelayMs({ response: { status: 503 } }, 3, { baseMs: 100, maxMs: 1000, random: () => 1 }), 400);
  assert.equal(retryDelayMs({ response: { status: 503 } }, 30, { baseMs: 100, maxMs: 1000, random: () => 0 }), 500);
  const waits: number[] = [];
  let calls = 0;
  const result = await withRetry(
    async () => {
      calls++;
      if (calls === 1)
        throw { response: { status: 403, data: { error: { errors: [{ reason: 'userRateLimitExceeded' }] } } } };
      if (calls === 2) throw { response: { status: 500 } };
      return 'done';
    },
    { sleep: async (ms) => void waits.push(ms), random: () => 0.5 },
  );
  assert.equal(result, 'done');
  assert.equal(waits.length, 2);
  const forbidden = { response: { status: 403, data: { error: { errors: [{ reason: 'insufficientPermissions' }] } } } };
  calls = 0;
  await assert.rejects(
    withRetry(
      async () => {
        calls++;
        throw forbidden;
      },
      { sleep: async () => {} },
    ),
  );
  assert.equal(calls, 1, 'a 403 that is not a rate limit is not retried');
});

test('installed-app flow: loopback redirect, PKCE, offline access; the refresh token then works, 401 refreshes, a revoked grant is named', async () => {
  const { google, gmail } = await fakeGoogle();
  try {
    google.consentingAccount = 'ann@example.com';
    const grant = await authorizeInstalledApp({
      client: parseClientSecrets(google.clientSecrets),
      endpoints: google.endpoints,
      scopes: ALL_GOOGLE_SCOPES,
      // The fake browser: Google's consent page redirects back to the loopback listener.
      onUrl: (url) => void fetch(url).then((response) => response.text()),
    });
    assert.match(grant.refreshToken, /^1\/\/rt-/);
    assert.deepEqual(grant.scopes, ALL_GOOGLE_SCOPES);
    assert.equal(google.tokenCalls.authorization_code, 1);

    const client = { clientId: google.clientId, clientSecret: google.clientSecret };
    const api = gmailApi(oauthClient(client, google.endpoints, grant.refreshToken), google.endpoints);
    gmail.mailbox('ann@example.com').add(Buffer.from('Message-ID: <a@x>\r\nSubject: hi\r\n\r\nhello\r\n'));
    assert.equal((await api.users.getProfile({ userId: 'me' })).data.emailAddress, 'ann@example.com');
    const refreshes = google.tokenCalls.refresh_token;
    google.expireAccessTokens();
    assert.equal(
      (await api.users.messages.list({ userId: 'me' })).data.messages?.length,
      1,
      'a 401 refreshed the token and the call went through',
    );
    assert.equal(google.tokenCalls.refresh_token, refreshes + 1);

    // A service without the refresh token asks for access tokens (what mail-sync's token RPC answers).
    let asked = 0;
    const brokered = gmailApi(
      brokeredAuth(async () => {
        asked++;
        const credentials = await refreshAccessToken(
          oauthClient(client, google.endpoints, grant.refreshToken),
          'ann@example.com',
        );
        return { access_token: credentials.access_token!, expiry_date: credentials.expiry_date! };
      }),
      google.endpoints,
    );
    assert.equal((await brokered.users.getProfile({ userId: 'me' })).data.emailAddress, 'ann@example.com');
    google.expireAccessTokens();
    assert.equal((await brokered.users.getProfile({ userId: 'me' })).data.emailAddress, 'ann@example.com');
    assert.equal(asked, 2, 'a 401 made the brokered client ask again');

    google.revoke('ann@example.com');
    await assert.rejects(
      refreshAccessToken(oauthClient(client, google.endpoints, grant.refreshToken), 'ann@example.com'),
      (error) => {
        assert.ok(error instanceof GrantRevokedError);
        assert.match(error.message, /invalid_grant/);
        return true;
      },
    );
  } finally {
    await google.stop();
  }
});

test('fake Gmail: a storm of 429s with Retry-After is ridden out by withRetry; history expires with a 404', async () => {
  const { google, gmail } = await fakeGoogle();
  try {
    const client = { clientId: google.clientId, clientSecret: google.clientSecret };
    const token = google.issueRefreshToken('bob@example.com', ALL_GOOGLE_SCOPES);
    const api = gmailApi(oauthClient(client, google.endpoints, token), google.endpoints);
    const box = gmail.mailbox('bob@example.com');
    const start = box.historyId;
    const message = box.add(Buffer.from('Message-ID: <b@x>\r\n\r\nbody\r\n'));
    box.modify(message.id, ['STARRED'], ['UNREAD']);
    google.fail({ path: /\/history$/, times: 5, status: 429, retryAfter: 0 });
    const waits: number[] = [];
    const history = await withRetry(() => api.users.history.list({ userId: 'me', startHistoryId: String(start) }), {
      sleep: async (ms) => void waits.push(ms),
      baseMs: 1,
    });
    assert.equal(waits.length, 5);
    const records = history.data.history ?? [];
    assert.deepEqual(records.map((r) => Object.keys(r).filter((k) => k !== 'id' && k !== 'messages')).flat(), [
      'messagesAdded',
      'labelsAdded',
      'labelsRemoved',
    ]);
    box.expireHistory();
    await assert.rejects(
      api.users.history.list({ userId: 'me', startHistoryId: String(start) }),
      (error) => (error as { status?: number }).status === 404,
    );
  } finally {
    await google.stop();
  }
});
