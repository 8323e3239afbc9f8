import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { timed } from './notmuch.js';

const run = promisify(execFile);

/**
 * mu (Debian's maildir-utils) over a Maildir, the other peer our mail figures are held against:
 * its database in a folder of its own beside the mail, so the user's mu setup is never touched.
 */
export class Mu {
  private constructor(private readonly home: string) {}

  /** mu for this Maildir, or undefined when mu is not installed. */
  static async open(maildir: string): Promise<Mu | undefined> {
    const home = path.join(path.dirname(maildir), '.mu-bench');
    fs.mkdirSync(home, { recursive: true });
    try {
      await run('mu', ['init', `--maildir=${maildir}`, `--muhome=${home}`, '--quiet']);
      return new Mu(home);
    } catch {
      return undefined;
    }
  }

  /** Milliseconds `mu index` takes to index the Maildir. */
  index(): Promise<number> {
    return timed(() => run('mu', ['index', `--muhome=${this.home}`, '--quiet'], { maxBuffer: 1 << 26 }));
  }
}
