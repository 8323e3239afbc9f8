import type { MethodDefinition } from './method.js';

/** API methods of the insights area. Add each definition here and to this list. */
export const insightsMethods: MethodDefinition[] = [];
