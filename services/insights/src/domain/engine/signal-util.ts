import { createHash } from 'node:crypto';
import type { SignalKind } from './types.js';

export const DAY_MS = 86_400_000;

/** "<kind>:<20 hex>" from the parts that identify the pattern (order matters). */
export function signalKey(kind: SignalKind, parts: readonly string[]): string {
  return `${kind}:${createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 20)}`;
}

/** Scores and ratios are stored rounded so that re-detection compares equal. */
export function round4(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}

export function daysBetween(from: Date, to: Date): number {
  return (to.getTime() - from.getTime()) / DAY_MS;
}

export function byCreatedThenId(a: { createdAt: Date; id: string }, b: { createdAt: Date; id: string }): number {
  return a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
