// The read benchmark's measuring and reporting (bench/read-api/run.ts decides what to ask): URLs
// of the map views a user would see, latency samples with fresh answers, and the results table.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../src/adapters/config/environment.ts';
import { clusterLevel } from '../../src/domain/read/clustering.ts';

export type Row = {
  endpoint: string;
  scenario: string;
  runs: number;
  p50: number;
  p95: number;
  target?: string;
  baseline?: { name: string; p50: number };
  note?: string;
};

export type Bounds = { north: number; south: number; east: number; west: number };
const WORLD: Bounds = { north: 85, south: -85, east: 180, west: -180 };

/** What a 1280x800 px map shows at a zoom around a point; the world at low zooms; may cross the antimeridian. */
export function viewport(zoom: number, lon: number, lat: number): Bounds {
  const width = (360 * 1280) / (256 * 2 ** zoom);
  if (width >= 360) return WORLD;
  const height = Math.min(170, ((360 * 800) / (256 * 2 ** zoom)) * Math.cos((lat * Math.PI) / 180));
  let west = lon - width / 2;
  let east = lon + width / 2;
  if (west < -180) west += 360;
  if (east > 180) east -= 360;
  return {
    north: Math.min(85, lat + height / 2),
    south: Math.max(-85, lat - height / 2),
    east: round(east),
    west: round(west),
  };
}

export function loadAverage(): string {
  return os
    .loadavg()
    .map((v) => v.toFixed(2))
    .join(' ');
}

function round(value: number): number {
  return Math.round(value * 1e5) / 1e5;
}

export function url(
  base: string,
  path: string,
  params: Record<string, string | number | Bounds | string[]>,
): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (Array.isArray(value)) for (const item of value) search.append(key, item);
    else search.append(key, typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  const query = search.toString();
  return `${base}${path}${query ? `?${query}` : ''}`;
}

export function percentile(samples: number[], fraction: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

export async function time<T>(run: () => Promise<T>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

export async function measureUrls(urls: string[]): Promise<number[]> {
  for (const warm of urls.slice(0, 3)) await fetchOk(warm);
  const samples: number[] = [];
  for (const target of urls) samples.push(await time(() => fetchOk(target)));
  return samples;
}

/**
 * Every latency request asks for a fresh answer (`Cache-Control: no-cache`): the table measures the
 * database's work, not the /events answer cache of the API process (src/adapters/postgres/read/page-cache.ts).
 */
async function fetchOk(target: string): Promise<void> {
  const response = await fetch(target, { headers: { 'cache-control': 'no-cache' } });
  const body = await response.arrayBuffer();
  if (response.status !== 200) {
    throw new Error(`${target} answered ${response.status}: ${Buffer.from(body).toString().slice(0, 300)}`);
  }
}

/** Prints the table and writes the figures as JSON to bench/results/. */
export function report(rows: Row[], total: number): void {
  const lines = [
    `# Read API benchmark: ${total} events, ${os.cpus().length} CPUs, load average at the end ${loadAverage()}`,
    '',
    '| endpoint | scenario | runs | p50 ms | p95 ms | target | baseline p50 ms | speed-up | note |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows
      .map((row) =>
        [
          row.endpoint,
          row.scenario,
          row.runs,
          row.p50.toFixed(1),
          row.p95.toFixed(1),
          row.target ?? '',
          row.baseline ? `${row.baseline.p50.toFixed(1)} (${row.baseline.name})` : '',
          row.baseline ? `${(row.baseline.p50 / row.p50).toFixed(1)}x` : '',
          row.note ?? '',
        ].join(' | '),
      )
      .map((line) => `| ${line} |`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const directory = path.join(projectRoot, 'bench', 'results');
  mkdirSync(directory, { recursive: true });
  const file = path.join(
    directory,
    `read-api-${total}-${new Date().toISOString().replaceAll(':', '-')}.json`,
  );
  writeFileSync(file, `${JSON.stringify({ total, rows, loadAverage: os.loadavg() }, null, 2)}\n`);
  process.stderr.write(`wrote ${path.relative(process.cwd(), file)}\n`);
}

/**
 * The clusters a simple implementation computes per request (the baseline of /events/geo): snap
 * every located event in the view to the zoom's grid and group, with no precomputed levels.
 */
export function naiveClusterQuery(
  bounds: Bounds,
  zoom: number,
  window: { startDate: string; endDate: string } | null,
): { text: string; values: (string | number)[] } {
  const size = 360 / 2 ** (clusterLevel(zoom) ?? 24);
  const boxes =
    bounds.west <= bounds.east
      ? [[bounds.west, bounds.east]]
      : [
          [bounds.west, 180],
          [-180, bounds.east],
        ];
  const where = boxes
    .map(
      ([west, east]) =>
        `location && st_makeenvelope(${west}, ${bounds.south}, ${east}, ${bounds.north}, 4326)`,
    )
    .join(' or ');
  return {
    text: `select count(*) as count, st_x(st_centroid(st_collect(location))) as lon,
                   st_y(st_centroid(st_collect(location))) as lat
            from events where (${where}) ${window ? 'and event_timestamp >= $2 and event_timestamp < $3' : ''}
            group by st_snaptogrid(location, $1)`,
    values: window ? [size, window.startDate, window.endDate] : [size],
  };
}
