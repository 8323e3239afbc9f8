import fs from 'node:fs';
import path from 'node:path';

/** What enrollment leaves under `$MEMEX_HOME/head/` (the folder 0700, every file 0600). */
export interface HeadCredentials {
  keyPem: string;
  certPem: string;
  caPem: string;
  /** Where the memex enrolled, and where it dials the link (host:port). */
  enrollUrl: string;
  linkAddress: string;
}

const FILES = { keyPem: 'key.pem', certPem: 'cert.pem', caPem: 'ca.pem' } as const;
const LINK_FILE = 'link.json';

/** The head link's credentials on disk. Moving the memex is copying MEMEX_HOME and enrolling again. */
export class CredentialsStore {
  readonly dir: string;

  constructor(home: string) {
    this.dir = path.join(home, 'head');
  }

  read(): HeadCredentials | undefined {
    if (!fs.existsSync(path.join(this.dir, LINK_FILE))) return undefined;
    const link = JSON.parse(fs.readFileSync(path.join(this.dir, LINK_FILE), 'utf8')) as {
      enroll_url: string;
      link_address: string;
    };
    const read = (name: string) => fs.readFileSync(path.join(this.dir, name), 'utf8');
    return {
      keyPem: read(FILES.keyPem),
      certPem: read(FILES.certPem),
      caPem: read(FILES.caPem),
      enrollUrl: link.enroll_url,
      linkAddress: link.link_address,
    };
  }

  /** Writes every file beside its final name first, then renames: a crash leaves the old set or the new. */
  write(credentials: HeadCredentials): void {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    fs.chmodSync(this.dir, 0o700);
    const contents: Record<string, string> = {
      [FILES.keyPem]: credentials.keyPem,
      [FILES.certPem]: credentials.certPem,
      [FILES.caPem]: credentials.caPem,
      [LINK_FILE]: JSON.stringify({ enroll_url: credentials.enrollUrl, link_address: credentials.linkAddress }),
    };
    for (const [name, text] of Object.entries(contents)) {
      fs.writeFileSync(path.join(this.dir, `${name}.new`), text, { mode: 0o600 });
    }
    // link.json last: it is what says "enrolled".
    for (const name of [FILES.keyPem, FILES.certPem, FILES.caPem, LINK_FILE]) {
      fs.renameSync(path.join(this.dir, `${name}.new`), path.join(this.dir, name));
    }
  }

  erase(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
