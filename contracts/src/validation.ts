import type { Static, TSchema } from '@sinclair/typebox';
import { FormatRegistry } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';

// TypeBox checks only the string formats it is told about.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
if (!FormatRegistry.Has('date-time'))
  FormatRegistry.Set('date-time', (v) => DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)));
if (!FormatRegistry.Has('date')) FormatRegistry.Set('date', (v) => DATE.test(v) && !Number.isNaN(Date.parse(v)));

/** A compiled schema check whose failures read like `data.body: Expected string`. */
export interface Validator<T extends TSchema> {
  readonly schema: T;
  check(value: unknown): value is Static<T>;
  /** Human-readable problems, each naming the offending path; empty when valid. */
  problems(value: unknown, root?: string): string[];
}

export function compile<T extends TSchema>(schema: T): Validator<T> {
  const checker: TypeCheck<T> = TypeCompiler.Compile(schema);
  return {
    schema,
    check: (value): value is Static<T> => checker.Check(value),
    problems(value, root = '') {
      // The compiled check is fast; walking the errors is not, and is only needed on failure.
      if (checker.Check(value)) return [];
      const seen = new Set<string>();
      const out: string[] = [];
      for (const error of checker.Errors(value)) {
        const path = joinPath(root, error.path);
        // TypeBox reports a union failure once per branch; one line per path is enough.
        if (seen.has(path)) continue;
        seen.add(path);
        out.push(`${path || '(root)'}: ${describe(error.message, error.value)}`);
        if (out.length >= 10) break;
      }
      return out;
    },
  };
}

function joinPath(root: string, pointer: string): string {
  const parts = pointer.split('/').filter(Boolean);
  return [root, ...parts].filter(Boolean).join('.');
}

function describe(message: string, value: unknown): string {
  if (value === undefined) return message.replace(/^Expected required property$/, 'is required');
  return `${message}, got ${JSON.stringify(value)?.slice(0, 60) ?? typeof value}`;
}
