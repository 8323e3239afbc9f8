import type { MethodDefinition } from './method.js';

/** API methods of the graph area. Add each definition here and to this list. */
export const graphMethods: MethodDefinition[] = [];
