import type { EventDefinition } from './envelope.js';

/** Events owned by the mail area. Add each definition here and to this list. */
export const mailEvents: EventDefinition[] = [];
