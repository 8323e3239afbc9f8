import { Type, type Static } from '@sinclair/typebox';

/**
 * What a caller may see. The gateway computes it from the caller's credential and the
 * scope rules; services apply it inside the SQL of every query (libs/db `visibleTo`).
 * A caller never supplies its own scope.
 */
export const Scope = Type.Union([
  Type.Object({ kind: Type.Literal('owner') }),
  Type.Object({
    kind: Type.Literal('agent'),
    tokenId: Type.String(),
    /** The session's labels, e.g. `mail`, `client:acme`. */
    labels: Type.Array(Type.String()),
    /** Item kinds the scope rules allow for those labels. */
    kinds: Type.Array(Type.String()),
  }),
]);
export type Scope = Static<typeof Scope>;

export const OWNER_SCOPE: Scope = { kind: 'owner' };

/** What a row must carry so a scope check can be made on it. */
export interface Visibility {
  kind: string;
  labels: readonly string[];
  spam?: boolean;
}

/**
 * The one visibility rule, mirrored in SQL by libs/db: the owner sees everything; an agent
 * sees non-spam items of an allowed kind whose labels (if any) share one with its own.
 */
export function isVisible(scope: Scope, row: Visibility): boolean {
  if (scope.kind === 'owner') return true;
  if (row.spam) return false;
  if (!scope.kinds.includes(row.kind)) return false;
  return row.labels.length === 0 || row.labels.some((label) => scope.labels.includes(label));
}

/** `labels → allowed item kinds`; `*` matches every session. */
export const ScopeRule = Type.Object(
  {
    when: Type.String({ description: 'a session label, or * for every session' }),
    kinds: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);
export type ScopeRule = Static<typeof ScopeRule>;

/** The seed's defaults: papers and notes for everyone, mail and photos only when labelled so. */
export const DEFAULT_SCOPE_RULES: ScopeRule[] = [
  { when: '*', kinds: ['document', 'paper', 'note', 'web', 'session_digest', 'output', 'event'] },
  { when: 'mail', kinds: ['email', 'attachment'] },
  { when: 'photos', kinds: ['photo', 'video', 'audio'] },
];

export function agentScope(tokenId: string, labels: string[], rules: ScopeRule[]): Scope {
  const kinds = new Set<string>();
  for (const rule of rules) {
    if (rule.when === '*' || labels.includes(rule.when)) rule.kinds.forEach((k) => kinds.add(k));
  }
  return { kind: 'agent', tokenId, labels: [...labels].sort(), kinds: [...kinds].sort() };
}
