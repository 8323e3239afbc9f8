import type { Static, TLiteral, TSchema } from '@sinclair/typebox';
import { FormatRegistry } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';

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
      for (const error of withinUnions(checker.Errors(value))) {
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

/**
 * A union's failure said by the branch the value meant: a branch that failed on one of its own
 * discriminating literals (`kind: 'email'` for a document) or on the value's own type (null for
 * an object) is not it, so `data.meta.from: Expected array` names the problem where TypeBox
 * alone says "Expected union value".
 */
function* withinUnions(errors: Iterable<ValueError>): Iterable<ValueError> {
  for (const error of errors) {
    const branches = error.type === ValueErrorType.Union ? error.errors.map((branch) => [...branch]) : [];
    const meant = branches.filter((branch) => !branch.some((e) => e.path === error.path || discriminates(e, error)));
    if (meant.length === 1) yield* withinUnions(meant[0]!);
    else yield discriminatorMissed(branches, error) ?? error;
  }
}

/** A literal the union's branch wants in a property of the value itself (`data.kind`, not deeper). */
function discriminates(e: ValueError, union: ValueError): boolean {
  return e.type === ValueErrorType.Literal && e.path.slice(0, e.path.lastIndexOf('/')) === union.path;
}

/** When every branch of a union wants another literal in one property (`data.kind`): which ones. */
function discriminatorMissed(branches: ValueError[][], union: ValueError): ValueError | undefined {
  const literals = branches.map((branch) => branch.find((e) => discriminates(e, union)));
  const first = literals[0];
  if (!first || literals.some((e) => e?.path !== first.path)) return undefined;
  const wanted = literals.map((e) => JSON.stringify((e!.schema as TLiteral).const));
  return { ...first, message: `Expected one of ${wanted.join(', ')}` };
}

function joinPath(root: string, pointer: string): string {
  const parts = pointer.split('/').filter(Boolean);
  return [root, ...parts].filter(Boolean).join('.');
}

function describe(message: string, value: unknown): string {
  if (value === undefined) return message.replace(/^Expected required property$/, 'is required');
  return `${message}, got ${JSON.stringify(value)?.slice(0, 60) ?? typeof value}`;
}
