import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { access, readFile, stat } from 'node:fs/promises';
import path from 'node:path';

/** A model folder or file is missing or unreadable; the message names the file. */
export class ModelLoadError extends Error {
  constructor(
    message: string,
    readonly file: string,
  ) {
    super(message);
    this.name = 'ModelLoadError';
  }
}

/** First 8 hex digits of the file's sha256, streamed so large ONNX files are not held twice. */
export async function sha8File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex').slice(0, 8);
}

export async function fileExists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/** Checks that `dir` is a folder holding every one of `names`; returns their full paths. */
export async function requireFiles(dir: string, kind: string, names: readonly string[]): Promise<string[]> {
  const st = await stat(dir).catch(() => undefined);
  if (!st?.isDirectory()) throw new ModelLoadError(`${kind} model folder not found: ${dir}`, dir);
  const paths = names.map((n) => path.join(dir, n));
  for (const p of paths) {
    if (!(await fileExists(p)))
      throw new ModelLoadError(
        `${kind} model folder ${dir} has no ${path.basename(p)} (expected ${names.join(' + ')})`,
        p,
      );
  }
  return paths;
}

/** Parses a JSON file, naming the file on failure; `undefined` when it does not exist. */
export async function readJsonIfExists(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ModelLoadError(`cannot read ${file}: ${(err as Error).message}`, file);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ModelLoadError(`${file} is not valid JSON: ${(err as Error).message}`, file);
  }
}

/** Reads a JSON file that must exist. */
export async function readJson(file: string): Promise<unknown> {
  const value = await readJsonIfExists(file);
  if (value === undefined) throw new ModelLoadError(`missing ${file}`, file);
  return value;
}

/** A plain-object view of parsed JSON, for reading optional config keys safely. */
export function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** A positive integer config value, or undefined. */
export function positiveInt(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}
