import type { EventDefinition } from './envelope.js';

/** Events owned by the insights area. Add each definition here and to this list. */
export const insightsEvents: EventDefinition[] = [];
