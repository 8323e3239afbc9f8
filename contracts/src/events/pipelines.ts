import type { EventDefinition } from './envelope.js';

/** Events owned by the pipelines area. Add each definition here and to this list. */
export const pipelinesEvents: EventDefinition[] = [];
