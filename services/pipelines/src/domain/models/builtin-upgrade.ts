import { EmbeddingComputed, MemexError, ModelAdded } from '@memex/contracts';
import { readEventsOf, type Bus, type EventPublisher } from '@memex/bus';
import { BUILTIN_MODEL, type ModelRegistry } from './registry.js';

/**
 * The space of the log's first vectors. The built-in space is embedded into from the first item
 * on, so on a memex started by earlier code this is the built-in space of that code.
 */
async function firstVectorsSpace(bus: Bus): Promise<string | undefined> {
  for await (const { event } of readEventsOf(bus, EmbeddingComputed, { untilCaughtUp: true })) {
    return event.data.space;
  }
  return undefined;
}

/**
 * A memex whose vectors are in an earlier built-in space (its word table or tokenization has
 * since changed: GloVe 6B 50-d `glove-6b-50d-sif@1` before `glove-100d-sif@2`) logs the current
 * built-in space as a `model.added`, once (the log refuses a second claim on `model:<space>`), so
 * the scheduler's backfill re-embeds every old item into it. The earlier space's model is gone
 * with the code that had it, so no query can be embedded there: search answers from the new
 * space as it fills, and by keyword throughout. Returns the earlier space when it logged one.
 */
export async function upgradeBuiltinSpace(
  bus: Bus,
  publisher: EventPublisher,
  models: ModelRegistry,
): Promise<string | undefined> {
  const builtin = BUILTIN_MODEL.space;
  if (models.isLogged(builtin)) return undefined;
  const earlier = await firstVectorsSpace(bus);
  if (earlier === undefined || models.get(earlier)) return undefined;
  try {
    await publisher.publish(ModelAdded, {
      subject: `model:${builtin}`,
      actor: { kind: 'system', id: 'pipelines' },
      expectFirst: true,
      data: { ...BUILTIN_MODEL, details: { replaces: earlier } },
    });
  } catch (error) {
    // Another pipelines process logged it first.
    if (error instanceof MemexError && error.code === 'conflict') return undefined;
    throw error;
  }
  console.log(`pipelines: the built-in space is now ${builtin}; re-embedding the items of ${earlier} into it`);
  return earlier;
}
