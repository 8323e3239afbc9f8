import { createHash } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * A ULID-shaped event id that is the same every time the same result is derived: the time part
 * of the event it derives from plus a hash of what it is. A redelivered job therefore publishes
 * the same ids, and JetStream's Msg-Id dedupe drops the repeats.
 */
export function derivedId(sourceEventId: string, ...key: Array<string | number>): string {
  const digest = createHash('sha256')
    .update(`${sourceEventId}|${key.join('|')}`)
    .digest();
  let random = '';
  for (let i = 0; i < 16; i++) random += CROCKFORD[digest[i]! & 31];
  return sourceEventId.slice(0, 10) + random;
}
