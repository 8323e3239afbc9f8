import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ImapFlow } from 'imapflow';
import { SMTPServer } from 'smtp-server';
import { simpleParser } from 'mailparser';
import { freePort, waitUntil } from '@memex/testing';

const DOVECOT = ['/usr/sbin/dovecot', '/usr/local/sbin/dovecot'].find((p) => fs.existsSync(p));

/** Why the IMAP tests cannot run here, or false (Debian's dovecot-imapd is installed). */
export function dovecotSkip(): string | false {
  return DOVECOT ? false : 'needs dovecot (apt-get install dovecot-imapd; deploy/local/provision.sh --with-media)';
}

/**
 * A real IMAP server for a test: Debian's dovecot, unprivileged on a loopback port, with its
 * configuration, passwords and Maildirs in a temporary folder (plain text login, no TLS), the
 * special-use folders Sent, Drafts, Trash and Archive, and CONDSTORE as dovecot offers it.
 */
export class Dovecot {
  private process: ChildProcess | undefined;

  private constructor(
    readonly dir: string,
    readonly port: number,
    readonly user: string,
    readonly password: string,
  ) {}

  static async start(user = 'owner@example.com', password = 'imap-secret'): Promise<Dovecot> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-dovecot-'));
    const dovecot = new Dovecot(dir, await freePort(), user, password);
    // Mail may not be owned by root: as root, the mail belongs to the dovecot user.
    const root = process.getuid?.() === 0;
    const uid = root ? Number(execFileSync('id', ['-u', 'dovecot']).toString()) : process.getuid!();
    const gid = root ? Number(execFileSync('id', ['-g', 'dovecot']).toString()) : process.getgid!();
    const me = os.userInfo().username;
    // dovecot's own processes (its auth user) read the password file inside.
    fs.chmodSync(dir, 0o755);
    fs.mkdirSync(path.join(dir, 'home'));
    fs.chownSync(path.join(dir, 'home'), uid, gid);
    fs.writeFileSync(path.join(dir, 'passwd'), `${user}:{PLAIN}${password}\n`);
    const special = (name: string, use: string) =>
      `  mailbox ${name} {\n    special_use = ${use}\n    auto = subscribe\n  }`;
    fs.writeFileSync(
      path.join(dir, 'dovecot.conf'),
      [
        `base_dir = ${dir}/run`,
        `state_dir = ${dir}/state`,
        `log_path = ${dir}/dovecot.log`,
        'protocols = imap',
        'listen = 127.0.0.1',
        'ssl = no',
        'disable_plaintext_auth = no',
        'auth_mechanisms = plain login',
        'mail_location = maildir:~/Maildir',
        'first_valid_uid = 1',
        ...(root ? [] : [`default_login_user = ${me}`, `default_internal_user = ${me}`]),
        `passdb {\n  driver = passwd-file\n  args = scheme=PLAIN username_format=%u ${dir}/passwd\n}`,
        `userdb {\n  driver = static\n  args = uid=${uid} gid=${gid} home=${dir}/home/%u\n}`,
        `service imap-login {\n  inet_listener imap {\n    address = 127.0.0.1\n    port = ${dovecot.port}\n  }\n  inet_listener imaps {\n    port = 0\n  }\n${root ? '' : '  chroot =\n'}}`,
        ...(root ? [] : ['service anvil {\n  chroot =\n}']),
        'service stats {\n  unix_listener stats-reader {\n    mode = 0666\n  }\n  unix_listener stats-writer {\n    mode = 0666\n  }\n}',
        `namespace inbox {\n  inbox = yes\n  separator = /\n${[
          special('Sent', '\\Sent'),
          special('Drafts', '\\Drafts'),
          special('Trash', '\\Trash'),
          special('Archive', '\\Archive'),
        ].join('\n')}\n}`,
        '',
      ].join('\n'),
    );
    dovecot.process = spawn(DOVECOT!, ['-F', '-c', path.join(dir, 'dovecot.conf')], { stdio: 'ignore' });
    await waitUntil(
      () =>
        new Promise<boolean>((resolve) => {
          const socket = net.connect(dovecot.port, '127.0.0.1');
          socket.once('connect', () => resolve(socket.end() && true));
          socket.once('error', () => resolve(false));
        }),
      'dovecot to listen',
      { timeoutMs: 20_000 },
    );
    return dovecot;
  }

  /** A session of the test's own (as another mail client would be). */
  async client(): Promise<ImapFlow> {
    const client = new ImapFlow({
      host: '127.0.0.1',
      port: this.port,
      secure: false,
      auth: { user: this.user, pass: this.password },
      logger: false,
    });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  }

  /** Runs `work` with a session of the test's own, logged out after. */
  async with<T>(work: (client: ImapFlow) => Promise<T>): Promise<T> {
    const client = await this.client();
    try {
      return await work(client);
    } finally {
      await client.logout();
    }
  }

  /** Gives the folder a new UIDVALIDITY, as a server does when it rebuilt the folder's index. */
  resetUidValidity(folder: string, value: number): void {
    execFileSync('doveadm', [
      '-c',
      path.join(this.dir, 'dovecot.conf'),
      'mailbox',
      'update',
      '-u',
      this.user,
      '--uid-validity',
      String(value),
      folder,
    ]);
  }

  async stop(): Promise<void> {
    if (this.process && this.process.exitCode === null) {
      const exited = new Promise((resolve) => this.process!.once('exit', resolve));
      this.process.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A message the test's SMTP server took: its envelope and bytes. */
export interface Accepted {
  from: string;
  to: string[];
  raw: Buffer;
  messageId: string | undefined;
}

/**
 * A real SMTP server for a test (nodemailer's smtp-server): it takes any login, records each
 * message, and delivers the copies for `local` into its INBOX on the dovecot (by IMAP APPEND).
 * `hold` keeps the answer to DATA back — 'before' the message is taken, or 'after' it was
 * taken and delivered — so a test can kill the sender in between.
 */
export class TestSmtp {
  readonly accepted: Accepted[] = [];
  hold: 'before' | 'after' | undefined;
  held = 0;
  private server: SMTPServer | undefined;
  port = 0;

  constructor(
    private readonly dovecot: Dovecot,
    private readonly local: string,
  ) {}

  async start(): Promise<this> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onAuth: (auth, _session, callback) => callback(null, { user: auth.username }),
      onData: (stream, session, callback) => {
        const parts: Buffer[] = [];
        stream.on('data', (part: Buffer) => parts.push(part));
        stream.on('end', () => {
          void (async () => {
            const stage = this.hold;
            if (stage) this.held++;
            if (stage === 'before') return; // never answered: the sender dies waiting
            const raw = Buffer.concat(parts);
            const to = session.envelope.rcptTo.map((r) => r.address);
            this.accepted.push({
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to,
              raw,
              messageId: (await simpleParser(raw)).messageId,
            });
            if (to.includes(this.local)) await this.dovecot.with((client) => client.append('INBOX', raw));
            if (stage === 'after') return;
            callback();
          })().catch((error: Error) => callback(error));
        });
      },
    });
    this.port = await freePort();
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}
