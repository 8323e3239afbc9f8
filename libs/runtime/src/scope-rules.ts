import fs from 'node:fs';
import path from 'node:path';
import { Type } from '@sinclair/typebox';
import { lastEventOf, type Bus } from '@memex/bus';
import { compile, DEFAULT_SCOPE_RULES, ScopeRule, ScopeRulesSet } from '@memex/contracts';

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

/**
 * The scope rules in force, straight from the log: the last the owner set (scope_rules.set, by
 * memex.scopes.set), else `$MEMEX_HOME/scopes.json`, else the defaults. For services with no
 * read model of them (the gateway keeps one); one JetStream lookup, so ask it when the rules are applied.
 */
export async function scopeRulesInForce(bus: Bus, home: string): Promise<ScopeRule[]> {
  const set = await lastEventOf(bus, ScopeRulesSet, 'scope_rules:all');
  return set ? set.event.data.rules : loadScopeRules(home);
}
