import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startStack, type TestStack } from '@memex/e2e';
import { Dovecot, dovecotSkip, TestSmtp } from '@memex/mail-sync/testing';
import { waitUntil } from '@memex/testing';

const CLI = fileURLToPath(new URL('../../bin/memex.js', import.meta.url));
const ACCOUNT = 'me@example.com';

/** The README's "Connecting an IMAP account", as written, against a real stack and a real dovecot. */
describe('memex accounts add imap', { skip: dovecotSkip() }, () => {
  let stack: TestStack;
  let dovecot: Dovecot;
  let smtp: TestSmtp;
  let dir: string;
  before(async () => {
    dovecot = await Dovecot.start(ACCOUNT);
    smtp = await new TestSmtp(dovecot, ACCOUNT).start();
    stack = await startStack(['ingest', 'mail-sync']);
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-cli-imap-'));
    await dovecot.with((client) =>
      client.append(
        'INBOX',
        'From: Ann <ann@example.org>\r\nTo: me@example.com\r\nSubject: Hello there\r\nMessage-ID: <hello@example.org>\r\nDate: Tue, 03 Mar 2026 10:00:00 +0000\r\n\r\nHi!\r\n',
      ),
    );
  });
  after(async () => {
    await stack?.stop();
    await smtp?.stop();
    await dovecot?.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  const memex = async (...args: string[]) =>
    (
      await promisify(execFile)(process.execPath, [CLI, ...args], {
        env: { ...process.env, MEMEX_URL: stack.url, MEMEX_HOME: stack.config.home },
      })
    ).stdout;

  test('add with a password file, list, send, remove', async () => {
    const passwordFile = path.join(dir, 'imap-password');
    await fs.writeFile(passwordFile, `${dovecot.password}\n`, { mode: 0o600 });
    const server = ['--host', '127.0.0.1', '--port', String(dovecot.port), '--no-tls', '--user', ACCOUNT];
    await assert.rejects(
      memex('accounts', 'add', 'imap', ...server, '--password-file', '/dev/null'),
      /\/dev\/null is empty/,
    );
    assert.match(
      await memex(
        'accounts',
        'add',
        'imap',
        ...server,
        '--password-file',
        passwordFile,
        '--smtp-port',
        String(smtp.port),
      ),
      /^connected me@example\.com; its folders start syncing now/m,
    );
    await waitUntil(
      async () =>
        /me@example\.com {2}imap {2}active {2}sync: incremental, 1 messages/.test(await memex('accounts', 'list')),
      'the first sync',
      {
        timeoutMs: 60_000,
        everyMs: 300,
      },
    );
    assert.match(
      await memex(
        'mail',
        'send',
        '--from',
        ACCOUNT,
        '--to',
        'ann@example.org',
        '--subject',
        'Hi',
        '--text',
        'Hello',
        '--undo',
        '0',
      ),
      /goes at/,
    );
    await waitUntil(
      async () => /sent .* to ann@example\.org {2}"Hi"/.test(await memex('mail', 'outgoing')),
      'the mail sent',
      {
        timeoutMs: 60_000,
        everyMs: 300,
      },
    );
    assert.equal(smtp.accepted.filter((m) => m.to.includes('ann@example.org')).length, 1);
    assert.match(await memex('accounts', 'remove', ACCOUNT), /^removed me@example\.com/);
    assert.doesNotMatch(await memex('accounts', 'list'), /me@example\.com/);
  });
});
