export { GraphModule } from './graph.module.js';
/** How the projector names things and links, for tools that write graph rows in bulk (bench). */
export { hashId, linkId } from './domain/keys.js';
export { mentionTerms, writePrefixes } from './projection/entities.js';
export type { GraphDatabase } from './projection/schema.js';
