import { Type } from '@sinclair/typebox';
import { defineEvent, type EventDefinition } from './envelope.js';

/**
 * Tier 0's rules reached a new version (logged once per version, by the first pipelines process
 * that runs it): every item logged before it is read again with the new rules, in the background.
 * Subject structure:<version>. (Named after tier 0's output, structure.extracted: event types are letters only.)
 */
export const Tier0Upgraded = defineEvent({
  type: 'structure.upgraded',
  owner: 'pipelines',
  v: 1,
  description: "Tier 0's rules reached a new version; items logged before it are read again in the background.",
  data: Type.Object(
    {
      /** e.g. `structure@2`. */
      version: Type.String({ pattern: '^[a-z][a-z0-9_-]*@[0-9A-Za-z.+_-]+$' }),
      /** What the new version reads that the last did not (for `memex jobs` and the log reader). */
      reason: Type.String({ maxLength: 500 }),
    },
    { additionalProperties: false },
  ),
});

export const tier0Events: EventDefinition[] = [Tier0Upgraded];
