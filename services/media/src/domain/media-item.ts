import type { DataOf, ItemIngested } from '@memex/contracts';

type ItemData = DataOf<typeof ItemIngested>;

/** An item's kind and meta, each kind with its own meta (what the readings below look at). */
export type KindAndMeta = ItemData extends infer D ? (D extends ItemData ? Pick<D, 'kind' | 'meta'> : never) : never;

/** Where a photo or recording was taken, as its handler read it; null when unknown (or not media). */
export function positionOf(data: KindAndMeta): { latitude: number; longitude: number } | null {
  return data.kind === 'photo' || data.kind === 'video' || data.kind === 'audio' ? data.meta.gps : null;
}

/**
 * Whether its handler knew when it was taken (a photo's EXIF or sidecar or file time, a
 * recording's creation time); otherwise its occurred_at is only when it was logged.
 */
export function timeKnown(data: KindAndMeta): boolean {
  if (data.kind === 'photo') return data.meta.timeSource !== null;
  if (data.kind === 'video' || data.kind === 'audio') return data.meta.createdAt !== null;
  return false;
}
