import type { MethodDefinition } from './method.js';

/** API methods of the mail area. Add each definition here and to this list. */
export const mailMethods: MethodDefinition[] = [];
