import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/**
 * notmuch (the Debian package) over a Maildir, the peer our mail figures are held against: its
 * own config beside the mail, so the user's notmuch setup is never touched.
 */
export class Notmuch {
  private constructor(private readonly env: NodeJS.ProcessEnv) {}

  /** notmuch for this Maildir, or undefined when notmuch is not installed. */
  static async open(maildir: string): Promise<Notmuch | undefined> {
    const config = path.join(maildir, '.notmuch-config');
    fs.writeFileSync(
      config,
      `[database]\npath=${maildir}\n[user]\nname=Bench\nprimary_email=bench@example.com\n[new]\ntags=inbox\n`,
    );
    const notmuch = new Notmuch({ ...process.env, NOTMUCH_CONFIG: config });
    return (await notmuch.notmuch('--version').then(
      () => true,
      () => false,
    ))
      ? notmuch
      : undefined;
  }

  /** Milliseconds `notmuch new` takes to index the Maildir. */
  index(): Promise<number> {
    return timed(() => this.notmuch('new', '--quiet'));
  }

  /** Milliseconds one `notmuch search` takes. */
  search(query: string): Promise<number> {
    return timed(() => this.notmuch('search', '--output=messages', '--limit=20', ...query.split(' ')));
  }

  private notmuch(...args: string[]): Promise<unknown> {
    return run('notmuch', args, { env: this.env, maxBuffer: 1 << 26 });
  }
}
