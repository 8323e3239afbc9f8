import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { OAuthClient } from './client-secrets.js';

/** What lets the memex act for an account: never on the log, never in a read model. */
export interface StoredGrant {
  account: string;
  client: OAuthClient;
  refreshToken: string;
  scopes: string[];
}

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Refresh tokens encrypted at rest (AES-256-GCM) under `<home>/google`: one file per account, a
 * key file readable by its owner only (0600). The account id is the cipher's associated data, so
 * a file copied to another account's name does not decrypt. Removing an account deletes its file.
 * Other secrets an account needs (an IMAP password) are kept the same way in a folder of their own.
 */
export class TokenStore<T extends { account: string } = StoredGrant> {
  private readonly dir: string;
  private readonly grantsDir: string;
  private key: Buffer | undefined;

  constructor(home: string, folder = 'google') {
    this.dir = path.join(home, folder);
    this.grantsDir = path.join(this.dir, 'grants');
  }

  get keyFile(): string {
    return path.join(this.dir, 'token-store.key');
  }

  put(grant: T): void {
    const key = this.loadKey();
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(grant.account));
    const body = Buffer.concat([cipher.update(JSON.stringify(grant), 'utf8'), cipher.final()]);
    const file = this.fileOf(grant.account);
    const temp = `${file}.${process.pid}.tmp`;
    fs.mkdirSync(this.grantsDir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(temp, Buffer.concat([iv, cipher.getAuthTag(), body]), { mode: 0o600 });
    fs.renameSync(temp, file);
  }

  /** The account's grant, or undefined when none is stored (never added, or removed). */
  get(account: string): T | undefined {
    let sealed: Buffer;
    try {
      sealed = fs.readFileSync(this.fileOf(account));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    const decipher = createDecipheriv('aes-256-gcm', this.loadKey(), sealed.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(account));
    decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      const plain = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
      return JSON.parse(plain.toString('utf8')) as T;
    } catch {
      throw new Error(`the stored grant of ${account} does not decrypt with ${this.keyFile} (was the key replaced?)`);
    }
  }

  /** Erases the account's grant; true when there was one. */
  remove(account: string): boolean {
    try {
      fs.unlinkSync(this.fileOf(account));
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
  }

  private fileOf(account: string): string {
    return path.join(this.grantsDir, `${createHash('sha256').update(account).digest('hex')}.enc`);
  }

  /** The key, created on first use; refused when others can read it. */
  private loadKey(): Buffer {
    if (this.key) return this.key;
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    try {
      fs.writeFileSync(this.keyFile, randomBytes(KEY_BYTES).toString('base64'), { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const mode = fs.statSync(this.keyFile).mode & 0o777;
    if ((mode & 0o077) !== 0) {
      throw new Error(`${this.keyFile} is readable by others (mode ${mode.toString(8)}): chmod 600 it`);
    }
    const key = Buffer.from(fs.readFileSync(this.keyFile, 'utf8').trim(), 'base64');
    if (key.length !== KEY_BYTES) throw new Error(`${this.keyFile} is not a ${KEY_BYTES}-byte key`);
    this.key = key;
    return key;
  }
}
