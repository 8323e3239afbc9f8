import type { DataOf, PhotoEventsFound } from '@memex/contracts';
import { distance } from 'geokdbush';

/** A photo or video as clustering sees it. */
export interface Moment {
  itemId: string;
  /** When it was taken (UTC ms). */
  at: number;
  /** The local calendar day it was taken on (`2024-06-01`): nights are counted in local days. */
  localDay: string;
  latitude: number | null;
  longitude: number | null;
  placeKey: string | null;
  placeName: string | null;
}

/** A new event starts after this long without a photo... */
export const EVENT_GAP_MS = 4 * 3600 * 1000;
/** ...or this far from the previous photo. */
export const EVENT_MAX_KM = 5;

export interface PhotoEvent {
  start: number;
  end: number;
  items: string[];
  /** The place most of its photos were taken at, if any has one. */
  placeKey: string | null;
  placeName: string | null;
}

export interface Trip {
  start: number;
  end: number;
  /** Local nights away: the number of local days spanned, less one. */
  nights: number;
  /** The places visited, in the order first seen. */
  places: Array<{ key: string; name: string }>;
  items: string[];
}

function mostFrequent(moments: Moment[]): { key: string; name: string } | null {
  const counts = new Map<string, { n: number; name: string }>();
  for (const m of moments) {
    if (!m.placeKey) continue;
    const seen = counts.get(m.placeKey) ?? { n: 0, name: m.placeName ?? m.placeKey };
    seen.n++;
    counts.set(m.placeKey, seen);
  }
  let best: { key: string; name: string; n: number } | null = null;
  for (const [key, { n, name }] of [...counts].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (!best || n > best.n) best = { key, name, n };
  }
  return best && { key: best.key, name: best.name };
}

/**
 * Photos grouped into events: taken in time order, a new event begins after a gap of more than
 * EVENT_GAP_MS or a move of more than EVENT_MAX_KM (when both photos have a position).
 */
export function clusterEvents(moments: Moment[]): PhotoEvent[] {
  const sorted = [...moments].sort((a, b) => a.at - b.at || (a.itemId < b.itemId ? -1 : 1));
  const groups: Moment[][] = [];
  for (const m of sorted) {
    const group = groups[groups.length - 1];
    const last = group?.[group.length - 1];
    const moved =
      last &&
      last.latitude !== null &&
      m.latitude !== null &&
      distance(last.longitude!, last.latitude, m.longitude!, m.latitude) > EVENT_MAX_KM;
    if (!group || !last || m.at - last.at > EVENT_GAP_MS || moved) groups.push([m]);
    else group.push(m);
  }
  return groups.map((group) => {
    const place = mostFrequent(group);
    return {
      start: group[0]!.at,
      end: group[group.length - 1]!.at,
      items: group.map((m) => m.itemId),
      placeKey: place?.key ?? null,
      placeName: place?.name ?? null,
    };
  });
}

/**
 * Trips: home is the place with the most photos; a trip is a run of photos taken away from it
 * (photos without a place do not break the run) that spans at least one local night.
 */
export function findTrips(moments: Moment[]): { home: { key: string; name: string } | null; trips: Trip[] } {
  const home = mostFrequent(moments);
  if (!home) return { home: null, trips: [] };
  const sorted = [...moments].sort((a, b) => a.at - b.at || (a.itemId < b.itemId ? -1 : 1));
  const runs: Moment[][] = [];
  let run: Moment[] = [];
  for (const m of sorted) {
    if (m.placeKey === home.key) {
      if (run.length > 0) runs.push(run);
      run = [];
    } else if (m.placeKey || run.length > 0) run.push(m);
  }
  if (run.length > 0) runs.push(run);
  const trips: Trip[] = [];
  for (const away of runs) {
    // A run ends at its last located photo: unplaced ones after it may be back home.
    while (away.length > 0 && !away[away.length - 1]!.placeKey) away.pop();
    if (away.length === 0) continue;
    const days = new Set(away.map((m) => m.localDay)).size;
    const first = Date.parse(`${away[0]!.localDay}T00:00:00Z`);
    const last = Date.parse(`${away[away.length - 1]!.localDay}T00:00:00Z`);
    const nights = Math.round((last - first) / 86_400_000);
    if (nights < 1 || days < 1) continue;
    const places = new Map<string, string>();
    for (const m of away) if (m.placeKey && !places.has(m.placeKey)) places.set(m.placeKey, m.placeName ?? m.placeKey);
    trips.push({
      start: away[0]!.at,
      end: away[away.length - 1]!.at,
      nights,
      places: [...places].map(([key, name]) => ({ key, name })),
      items: away.map((m) => m.itemId),
    });
  }
  return { home, trips };
}

/**
 * The events and trips as graph things (photo_events.found): keyed by their first item, so a
 * thing keeps its key while photos join it later, named by place and local day.
 */
export function photoEventThings(moments: Moment[]): DataOf<typeof PhotoEventsFound> {
  const iso = (ms: number) => new Date(ms).toISOString();
  const dayOf = (itemId: string) => moments.find((m) => m.itemId === itemId)?.localDay ?? '';
  const { home, trips } = findTrips(moments);
  return {
    home,
    events: clusterEvents(moments).map((e) => {
      const place = e.placeKey ? { key: e.placeKey, name: e.placeName ?? e.placeKey } : null;
      return {
        key: `event:photos-${e.items[0]!.toLowerCase()}`,
        name: `${place ? `${place.name}, ` : 'Photos, '}${dayOf(e.items[0]!)}`,
        start: iso(e.start),
        end: iso(e.end),
        place,
        items: e.items,
      };
    }),
    trips: trips.map((t) => ({
      key: `trip:${t.items[0]!.toLowerCase()}`,
      name: `Trip to ${t.places.map((p) => p.name).join(', ')}, ${dayOf(t.items[0]!)} (${t.nights} night${t.nights === 1 ? '' : 's'})`,
      start: iso(t.start),
      end: iso(t.end),
      nights: t.nights,
      places: t.places,
      items: t.items,
    })),
  };
}
