import { sql } from 'kysely';
import { entitiesOfKeys, refreshEntities, type Trx } from './entities.js';

/** Where the owner's naming of a thing is kept among the names seen for its keys. */
export const OWNER_NAME_KIND = 'owner';
/** Counted so that no number of readings in items outweighs it. */
const OWNER_NAME_WEIGHT = 1_000_000_000;

/**
 * The owner's choice of a thing's name (entity.named): kept as a name seen for the key in a class
 * of its own, weighted above any reading, so the thing's name follows it (and the other names stay
 * aliases). Agents never see it: it was seen in no item of a kind their scope allows. A later
 * choice replaces an earlier one.
 */
export async function applyOwnerName(trx: Trx, key: string, name: string): Promise<void> {
  await sql`delete from key_names where key = ${key} and kind = ${OWNER_NAME_KIND}`.execute(trx);
  await sql`insert into key_names (key, name, kind, labels, spam, n)
    values (${key}, ${name}, ${OWNER_NAME_KIND}, '{}', false, ${OWNER_NAME_WEIGHT})`.execute(trx);
  await refreshEntities(trx, await entitiesOfKeys(trx, [key]));
}
