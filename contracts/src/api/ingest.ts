import type { MethodDefinition } from './method.js';

/** API methods of the ingest area. Add each definition here and to this list. */
export const ingestMethods: MethodDefinition[] = [];
