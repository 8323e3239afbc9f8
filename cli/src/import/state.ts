import fs from 'node:fs';
import path from 'node:path';

export type Status = 'created' | 'updated' | 'duplicate' | 'rejected';

export interface Totals {
  created: number;
  updated: number;
  duplicate: number;
  rejected: number;
  /** Files not sent, each with a reason (no handler for the type, Maildir metadata, a hidden file…). */
  skipped: number;
}

export const noTotals = (): Totals => ({ created: 0, updated: 0, duplicate: 0, rejected: 0, skipped: 0 });

/** Rejections kept in the state file, so the summary can name them after several runs. */
const KEPT_REJECTIONS = 1000;

/**
 * Where an import of one source stands, in `$MEMEX_HOME/imports/<kind>-<source>.json`: what it
 * reads (`target`), how far it got (`offset` for an mbox; the keys done for folders, in a `.done`
 * file beside it, one JSON string per line), and what the runs so far gave. Written after each batch the
 * server answered, atomically, so an interrupted import resumes where it stopped.
 */
export interface ImportState {
  version: 1;
  kind: string;
  source: string;
  target: string;
  offset: number;
  /** The mbox files `offset` runs through, in order, with their sizes (an import of a folder of mboxes). */
  mboxes?: Array<[key: string, size: number]>;
  totals: Totals;
  rejections: Array<{ key: string; reason: string }>;
}

export class StateFile {
  readonly jsonPath: string;
  readonly donePath: string;
  private doneFd: number | undefined;

  constructor(home: string, kind: string, source: string) {
    const dir = path.join(home, 'imports');
    const base = `${kind}-${source}`.replace(/[^A-Za-z0-9._@+-]/g, '_');
    this.jsonPath = path.join(dir, `${base}.json`);
    this.donePath = path.join(dir, `${base}.done`);
  }

  /**
   * The state of an earlier run on the same target; none when there was none or `restart`. A
   * source that `follows` its exports (a Google Takeout: each newer export is another folder)
   * takes the new target and keeps what was done.
   */
  load(kind: string, source: string, target: string, restart: boolean, follows = false): ImportState {
    const fresh: ImportState = { version: 1, kind, source, target, offset: 0, totals: noTotals(), rejections: [] };
    if (restart) {
      fs.rmSync(this.jsonPath, { force: true });
      fs.rmSync(this.donePath, { force: true });
      return fresh;
    }
    let state: ImportState;
    try {
      state = JSON.parse(fs.readFileSync(this.jsonPath, 'utf8')) as ImportState;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return fresh;
      throw new Error(
        `cannot read the import state ${this.jsonPath}: ${(error as Error).message} (run with --restart to start over)`,
      );
    }
    state.totals = { ...noTotals(), ...state.totals }; // state files from before `skipped`
    if (state.target !== target && follows) state.target = target;
    if (state.target !== target) {
      throw new Error(
        `source "${source}" was imported from ${state.target}, not ${target}: use another --source, or --restart to import this one under it`,
      );
    }
    return state;
  }

  /** Keys already done (folders): the lines of the `.done` file; a line cut short by a crash is ignored. */
  doneKeys(): Set<string> {
    let text: string;
    try {
      text = fs.readFileSync(this.donePath, 'utf8');
    } catch {
      return new Set();
    }
    const lines = text.split('\n');
    if (!text.endsWith('\n')) lines.pop();
    return new Set(lines.filter(Boolean).map((line) => JSON.parse(line) as string));
  }

  appendDone(keys: string[]): void {
    if (keys.length === 0) return;
    fs.mkdirSync(path.dirname(this.donePath), { recursive: true });
    this.doneFd ??= fs.openSync(this.donePath, 'a');
    fs.writeSync(this.doneFd, keys.map((k) => `${JSON.stringify(k)}\n`).join(''));
  }

  save(state: ImportState): void {
    state.rejections = state.rejections.slice(-KEPT_REJECTIONS);
    fs.mkdirSync(path.dirname(this.jsonPath), { recursive: true });
    const temp = `${this.jsonPath}.tmp`;
    fs.writeFileSync(temp, JSON.stringify(state, null, 1));
    fs.renameSync(temp, this.jsonPath);
  }

  close(): void {
    if (this.doneFd !== undefined) fs.closeSync(this.doneFd);
    this.doneFd = undefined;
  }
}
