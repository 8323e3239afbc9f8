/** The item reader's worker (ParsePool): reads one item per task, several at once. */
import { createRegistry } from '../domain/handlers/index.js';
import { readItem, type ParseRequest } from './parse.js';

const registry = createRegistry();

// The answer is copied back by the structured clone (small Buffers share Node's pool, which
// cannot be transferred).
export default function read(request: ParseRequest): ReturnType<typeof readItem> {
  return readItem(registry, request);
}
