import { EventRegistry } from './envelope.js';
import { ItemDeleted, NotePut } from './items.js';
import { TokenCreated, TokenRevoked } from './tokens.js';

/** Every event type the memex knows. Add a definition here when a service starts publishing it. */
export const eventCatalog = new EventRegistry().register(NotePut, ItemDeleted, TokenCreated, TokenRevoked);
