import { MemexError, Tier0Upgraded } from '@memex/contracts';
import type { EventPublisher } from '@memex/bus';
import type { Tier0Reading } from '../../jobs/queue.js';
import { TIER0_ADDED, TIER0_VERSION } from './structure-task.js';

/**
 * Logs tier 0's version once (the log refuses a second claim on `structure:<version>`): the
 * scheduler then has every item logged before it read again by what the version added.
 * Answers whether this process logged it.
 */
export async function logTier0Version(publisher: EventPublisher): Promise<boolean> {
  try {
    await publisher.publish(Tier0Upgraded, {
      subject: `structure:${TIER0_VERSION}`,
      actor: { kind: 'system', id: 'pipelines' },
      expectFirst: true,
      data: { version: TIER0_VERSION, reason: 'reads papers (papers@1) and commitments in mail (commitments@1)' },
    });
    return true;
  } catch (error) {
    // Logged before, by this version's first start or another pipelines process.
    if (error instanceof MemexError && error.code === 'conflict') return false;
    throw error;
  }
}

/** What a logged tier-0 version added: this code's own, else (a version it does not know) everything. */
export function readingsAdded(version: string): Tier0Reading[] {
  return version === TIER0_VERSION ? TIER0_ADDED : ['structure', 'paper', 'commitments'];
}
