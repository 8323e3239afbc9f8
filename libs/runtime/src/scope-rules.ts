import fs from 'node:fs';
import path from 'node:path';
import { Type } from '@sinclair/typebox';
import { compile, DEFAULT_SCOPE_RULES, ScopeRule } from '@memex/contracts';

const rulesValidator = compile(Type.Array(ScopeRule));

/** `$MEMEX_HOME/scopes.json` (a list of `{when, kinds}`) replaces the default rules when present. */
export function loadScopeRules(home: string): ScopeRule[] {
  const file = path.join(home, 'scopes.json');
  if (!fs.existsSync(file)) return DEFAULT_SCOPE_RULES;
  const rules: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
  const problems = rulesValidator.problems(rules, 'scopes.json');
  if (problems.length > 0) throw new Error(`${file}: ${problems.join('; ')}`);
  return rules as ScopeRule[];
}
