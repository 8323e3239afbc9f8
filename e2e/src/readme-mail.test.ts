import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MailList } from '@memex/contracts';
import { endpointsEnv } from '@memex/google';
import { FakeGmail, FakeGoogleServer } from '@memex/google/testing';
import { Dovecot, TestSmtp, dovecotSkip } from '@memex/mail-sync/testing';
import { waitUntil } from '@memex/testing';
import {
  SECTIONS_BY_TEST,
  SECTION_TIMEOUT_MS,
  examplesOf,
  printed,
  readmeSession,
  runExamples,
  type ReadmeSession,
} from './readme-run.js';
import { startStack, type TestStack } from './stack.js';

const [GMAIL, IMAP] = SECTIONS_BY_TEST['readme-mail.test.ts'];
const GMAIL_ADDRESS = 'me@gmail.com';
const IMAP_ADDRESS = 'me@fastmail.com';

/** A message to `to` (RFC 822, CRLF), the n-th of the test. */
function message(n: number, to: string): Buffer {
  return Buffer.from(
    [
      `Message-ID: <${n}.readme@example.org>`,
      `Date: Mon, ${n} Mar 2026 09:00:00 +0000`,
      'From: Ann Lee <ann@example.com>',
      `To: ${to}`,
      `Subject: Invoice ${n} from the vendor`,
      '',
      `Invoice number ${n}, due at the end of the month.`,
      '',
    ].join('\r\n'),
  );
}

/** The ids of an account's messages in the mail views, once it has some. */
async function messagesOf(stack: TestStack, account: string): Promise<string[]> {
  let ids: string[] = [];
  await waitUntil(async () => {
    const { messages } = await stack.owner.call(MailList, { view: 'all', limit: 50 });
    ids = messages.filter((m) => m.account.endsWith(account)).map((m) => m.id);
    return ids.length > 0;
  }, `mail of ${account}`);
  return ids;
}

describe(
  "README's mail sections run as written: Gmail against a fake Google, IMAP against a real Dovecot",
  { skip: dovecotSkip() },
  () => {
    let google: FakeGoogleServer;
    let dovecot: Dovecot;
    let smtp: TestSmtp;
    let stack: TestStack;
    let session: ReadmeSession;

    before(async () => {
      google = await new FakeGoogleServer().start();
      // The user who "signs in" in the browser the test stands in for.
      google.consentingAccount = GMAIL_ADDRESS;
      const gmail = new FakeGmail(google);
      for (let n = 1; n <= 3; n++) gmail.mailbox(GMAIL_ADDRESS).add(message(n, GMAIL_ADDRESS), { labelIds: ['INBOX'] });
      // mail-sync (in this process) and the CLI reach the fake as they would reach Google; polled often.
      Object.assign(process.env, endpointsEnv(google.endpoints), {
        MEMEX_GMAIL_POLL_MS: '500',
        MEMEX_GMAIL_QUOTA_UNITS_PER_SECOND: '1000000',
      });
      dovecot = await Dovecot.start(IMAP_ADDRESS);
      await dovecot.with((client) => client.append('INBOX', message(9, IMAP_ADDRESS), []));
      smtp = await new TestSmtp(dovecot, IMAP_ADDRESS).start();
      stack = await startStack(['ingest', 'search', 'mail-sync']);
      const home = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-readme-mail-'));
      fs.writeFileSync(path.join(home, 'client_secret.json'), JSON.stringify(google.clientSecrets));
      session = readmeSession(home, stack, {
        // README: "asked without echo; or --password-file ~/imap-password, or MEMEX_IMAP_PASSWORD=…"
        MEMEX_IMAP_PASSWORD: dovecot.password,
      });
    });
    after(async () => {
      await stack?.stop();
      await smtp?.stop();
      await dovecot?.stop();
      await google?.stop();
      if (session) fs.rmSync(session.home, { recursive: true, force: true });
    });

    test(
      'Connecting Gmail: consent in the (test) browser, sync, rules, sending, drafts, removal',
      { timeout: SECTION_TIMEOUT_MS },
      async () => {
        let consented = false;
        let message = '';
        await runExamples(examplesOf([GMAIL!]), session, {
          // The browser: open the URL the command prints; the fake Google consents and sends it back to the command.
          onStdout: (command, stdout) => {
            const url = /^\s+(http\S+)$/m.exec(stdout)?.[1];
            if (!command.includes('accounts add google') || consented || !url) return;
            consented = true;
            void fetch(url).then((reply) => assert.equal(reply.status, 200, `the browser's visit to ${url}`));
          },
          before: async (command) => {
            if (command.includes('<item id>') && !message) message = (await messagesOf(stack, GMAIL_ADDRESS))[0]!;
          },
          prepare: (command, { lastId }) => command.replaceAll('<item id>', message).replaceAll('<draft id>', lastId),
        });
        assert.ok(consented, 'the consent URL was printed and visited');
        assert.match(printed(session, /accounts add google/), new RegExp(`connected ${GMAIL_ADDRESS}`));
        assert.match(printed(session, /accounts list/), new RegExp(GMAIL_ADDRESS));
      },
    );

    test(
      'Connecting an IMAP account: login (the password from the environment), sync, sending, removal',
      { timeout: SECTION_TIMEOUT_MS },
      async () => {
        await runExamples(examplesOf([IMAP!]), session, {
          before: async (command) => {
            if (command.includes('accounts list')) await messagesOf(stack, IMAP_ADDRESS);
            // The reader removes the account once the mail went (after the undo window), not before.
            if (command.includes(`accounts remove ${IMAP_ADDRESS}`))
              await waitUntil(
                async () => smtp.accepted.some((m) => m.to.includes('ann@example.com')),
                'the mail at SMTP',
              );
          },
          prepare: (command) =>
            command
              .replace('--host imap.fastmail.com', `--host 127.0.0.1 --port ${dovecot.port} --no-tls`)
              .replace('--smtp-host smtp.fastmail.com', `--smtp-host 127.0.0.1 --smtp-port ${smtp.port}`),
        });
        assert.match(printed(session, /accounts add imap/), new RegExp(`connected ${IMAP_ADDRESS}`));
        assert.match(printed(session, /accounts list/), new RegExp(`${IMAP_ADDRESS}.*imap`));
      },
    );
  },
);
