import type { BlobStore } from '@memex/blobs';
import {
  deriveOnWorker,
  memexLocations,
  workerScheme,
  type NatsManyRequester,
  type NatsRequester,
  type WorkerDerived,
} from '@memex/locations';

/** The largest in-place file media reads whole (renditions and keyframes work on a buffer). */
const IN_PLACE_LIMIT_BYTES = 2 * 1024 ** 3;

const locations = memexLocations();
let workers: NatsManyRequester | undefined;

/** Lets media read `worker:` locations (files on a `memex worker`) and ask workers for their pictures, through this NATS connection. */
export function readWorkersThrough(nc: NatsRequester & NatsManyRequester): void {
  locations.register('worker', workerScheme(nc));
  workers = nc;
}

/**
 * A worker's file's pictures made by the worker itself (docs/sources.md "Workers": its bytes
 * stay there). Null when the item is not on a worker or its worker does not derive (then the
 * bytes are read through it). Throws `LocationUnreachable` when the worker cannot read the file
 * now: a failure like any other, retried, then recorded until it is reachable again.
 */
export async function derivedOnWorker(
  data: { location?: string | undefined },
  request: { task: 'renditions'; format: string } | { task: 'keyframes' },
): Promise<WorkerDerived | null> {
  if (!workers || !data.location?.startsWith('worker:')) return null;
  return deriveOnWorker(workers, data.location, request);
}

/**
 * An item's original bytes: its blob, or — for a file read in place (docs/sources.md) — read
 * from where it lives (`LocationUnreachable` when it cannot be now). Null when its blob is gone
 * (the item deleted meanwhile).
 */
export async function originalBytes(
  data: { content_sha256: string; location?: string | undefined },
  blobs: BlobStore,
): Promise<Buffer | null> {
  if (data.location === undefined) return blobs.get(data.content_sha256).catch(() => null);
  return locations.readAll(data.location, IN_PLACE_LIMIT_BYTES);
}
