import type { MethodDefinition } from './method.js';

/** API methods of the search area. Add each definition here and to this list. */
export const searchMethods: MethodDefinition[] = [];
