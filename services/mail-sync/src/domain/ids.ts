import { createHash } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * A ULID-shaped id that is always the same for the same parts: what a retried step (a rule's
 * forward) publishes under, so the log refuses its second `outgoing.queued`.
 */
export function derivedId(...parts: string[]): string {
  const digest = createHash('sha256').update(parts.join('\0')).digest();
  let id = '';
  for (let i = 0; i < 26; i++) id += CROCKFORD[digest[i]! % 32];
  // A ULID's first character is at most 7 (its time fits 48 bits).
  return CROCKFORD[digest[26]! % 8] + id.slice(1);
}
