import { seededRandom } from '../../test/helpers/v1-fixture.ts';
import { CITIES } from '../read-api/cities.ts';

// Distinct questions for the throughput benches on the 1M-event set (bench/read-api/generate.ts):
// seeded, so every run asks the same ones, and all different, so that no answer is reused.

/**
 * Distinct /events questions, so that no two requests of a phase are alike: a catalog and a
 * one-year window, or a city's bounds at zoom 10 and a dataset, or page 2-5 of a catalog.
 */
export function eventsQuestions(catalogs: string[], datasets: string[], count: number): string[] {
  const random = seededRandom(22);
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)] as T;
  const paths: string[] = [];
  for (let i = 0; i < count; i++) {
    const search = new URLSearchParams();
    const kind = i % 3;
    if (kind === 0) {
      const start = Date.parse('2016-01-01T00:00:00Z') + Math.floor(random() * 9 * 365 * 86_400_000);
      search.set('catalog', pick(catalogs));
      search.set('startDate', new Date(start).toISOString());
      search.set('endDate', new Date(start + 365 * 86_400_000).toISOString());
    } else if (kind === 1) {
      const [, lon, lat] = pick(CITIES);
      const bounds = { north: lat + 0.2, south: lat - 0.2, east: lon + 0.3, west: lon - 0.3 };
      search.set('bounds', JSON.stringify(bounds));
      search.set('datasets', pick(datasets));
    } else {
      search.set('catalog', pick(catalogs));
      search.set('page', String(2 + (i % 4)));
    }
    paths.push(`/api/v1/events?${search}`);
  }
  return paths;
}

/** One year from a random day of 2016-2024, as the read API's startDate/endDate. */
function yearWindow(random: () => number): { startDate: string; endDate: string } {
  const start = Date.parse('2016-01-01T00:00:00Z') + Math.floor(random() * 9 * 365 * 86_400_000);
  return {
    startDate: new Date(start).toISOString(),
    endDate: new Date(start + 365 * 86_400_000).toISOString(),
  };
}

/** A box around a city, `degrees` wide, as the read API's `bounds`. */
function cityBounds(random: () => number, degrees: number): string {
  const [, lon, lat] = CITIES[Math.floor(random() * CITIES.length)] as (typeof CITIES)[number];
  const half = degrees / 2;
  return JSON.stringify({
    north: Math.min(85, lat + half / 2),
    south: Math.max(-85, lat - half / 2),
    east: Math.min(180, lon + half),
    west: Math.max(-180, lon - half),
  });
}

/**
 * Distinct questions per route family of /api/v1 besides /events: map clusters at zooms 2-16 over
 * a city (half of them with a one-year window), histograms of a catalog or a city box with a
 * window, stats by dataset with a window, and vector tiles over the cities at zooms 4-14.
 */
export function familyQuestions(catalogs: string[], count: number): Record<string, string[]> {
  const random = seededRandom(23);
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)] as T;
  const families: Record<string, string[]> = { geo: [], temporal: [], stats: [], tiles: [] };
  for (let i = 0; i < count; i++) {
    const zoom = 2 + 2 * (i % 8);
    const geo = new URLSearchParams({ zoom: String(zoom), bounds: cityBounds(random, 360 / 2 ** zoom) });
    if (i % 2) for (const [key, value] of Object.entries(yearWindow(random))) geo.set(key, value);
    families.geo?.push(`/api/v1/events/geo?${geo}`);
    const temporal = new URLSearchParams(yearWindow(random));
    if (i % 2) temporal.set('catalog', pick(catalogs));
    else temporal.set('bounds', cityBounds(random, 2));
    families.temporal?.push(`/api/v1/events/temporal?${temporal}`);
    const stats = new URLSearchParams({ groupBy: 'dataset', ...yearWindow(random) });
    families.stats?.push(`/api/v1/events/stats?${stats}`);
    const tileZoom = 4 + (i % 11);
    const [, lon, lat] = pick(CITIES);
    const n = 2 ** tileZoom;
    const x = Math.floor(((lon + 180) / 360) * n) + ((i >> 4) % 3) - 1;
    const rad = (lat * Math.PI) / 180;
    const y = Math.floor(((1 - Math.log(Math.tan(rad) + 1 / Math.cos(rad)) / Math.PI) / 2) * n);
    families.tiles?.push(`/api/v1/tiles/${tileZoom}/${(x + n) % n}/${y}.mvt`);
  }
  return families;
}
