import type { BlobStore } from '@memex/blobs';
import { LocationUnreachable, memexLocations, workerScheme, type NatsRequester } from '@memex/locations';

/** The largest in-place file media reads whole (renditions and keyframes work on a buffer). */
const IN_PLACE_LIMIT_BYTES = 2 * 1024 ** 3;

const locations = memexLocations();

/** Lets media read `worker:` locations (files on a `memex worker`) through this NATS connection. */
export function readWorkersThrough(nc: NatsRequester): void {
  locations.register('worker', workerScheme(nc));
}

/**
 * An item's original bytes: its blob, or — for a file read in place (docs/sources.md) — read
 * from where it lives. Null when they are gone (deleted meanwhile, or the location unreachable).
 */
export async function originalBytes(
  data: { content_sha256: string; location?: string | undefined },
  blobs: BlobStore,
): Promise<Buffer | null> {
  if (data.location === undefined) return blobs.get(data.content_sha256).catch(() => null);
  try {
    return await locations.readAll(data.location, IN_PLACE_LIMIT_BYTES);
  } catch (error) {
    if (error instanceof LocationUnreachable) return null;
    throw error;
  }
}
