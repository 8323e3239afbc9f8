import type { EventDefinition } from './envelope.js';

/** Events owned by the graph area. Add each definition here and to this list. */
export const graphEvents: EventDefinition[] = [];
