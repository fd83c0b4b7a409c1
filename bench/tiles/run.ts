// Measures GET /api/v1/tiles/{z}/{x}/{y}.mvt on the read-API benchmark database (1M events, built by
// bench/read-api/generate.ts): per zoom 0-16, the time per tile over a realistic pan pattern (a
// 1280x800 px map around a city, panned five times by half a screen, asking only for the tiles it has
// not seen yet), warm (the whole pattern runs once before it is measured); and, in the same run, the
// naive tile a simple implementation serves: ST_AsMVT over the raw rows of the tile (id and title of
// every event in it). Both on one connection, one tile at a time.
//
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/readmodel_bench_tiles \
//     node bench/tiles/run.ts [--pans 5] [--naive-tiles 8] [--max-zoom 16]
//
// The time is the read model's (src/adapters/postgres/read/tiles.ts) as the route calls it: the
// scope, the statement with its planning and the encoding, the round trip; not the HTTP layer. Prints
// one table; writes the figures as JSON to bench/results/.

import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { projectRoot } from '../../src/adapters/config/environment.ts';
import { createDatabasePool, sql } from '../../src/adapters/postgres/database.ts';
import { postgresEventReader } from '../../src/adapters/postgres/read/index.ts';
import { parseEventFilter } from '../../src/domain/read/read-query.ts';
import { mercatorCell } from '../../src/domain/read/clustering.ts';
import { type Tile, TILE_EXTENT } from '../../src/domain/read/tiles.ts';
import { seededRandom } from '../../test/helpers/v1-fixture.ts';
import { benchDatabaseUrl } from '../read-api/bench-database.ts';
import { CITIES } from '../read-api/cities.ts';

const { values: options } = parseArgs({
  options: {
    pans: { type: 'string', default: '5' },
    'naive-tiles': { type: 'string', default: '8' },
    'max-zoom': { type: 'string', default: '16' },
  },
});
const PANS = Number(options.pans);
const NAIVE_TILES = Number(options['naive-tiles']);
const MAX_ZOOM = Number(options['max-zoom']);

type Bounds = { north: number; south: number; east: number; west: number };

// The tiles of zoom z a box (not crossing the antimeridian) touches, as a map client asks for them:
// the client's business, not the service's, so it lives with the benchmark that plays the client.
function tilesCovering(box: Bounds, z: number): Tile[] {
  const northWest = mercatorCell(box.west, box.north, z);
  const southEast = mercatorCell(box.east, box.south, z);
  const tiles: Tile[] = [];
  for (let x = northWest.x; x <= southEast.x; x += 1)
    for (let y = northWest.y; y <= southEast.y; y += 1) tiles.push({ z, x, y });
  return tiles;
}

const MERCATOR = 85.0511;

/** What a 1280x800 px map (256 px tiles) shows at a zoom around a point, within the Mercator world. */
function viewport(zoom: number, lon: number, lat: number): Bounds[] {
  const width = (360 * 1280) / (256 * 2 ** zoom);
  if (width >= 360) return [{ north: MERCATOR, south: -MERCATOR, west: -180, east: 180 }];
  const height = Math.min(170, ((360 * 800) / (256 * 2 ** zoom)) * Math.cos((lat * Math.PI) / 180));
  const north = Math.min(MERCATOR, lat + height / 2);
  const south = Math.max(-MERCATOR, lat - height / 2);
  const west = lon - width / 2;
  const east = lon + width / 2;
  // A view across the antimeridian asks for the tiles on both sides.
  if (west < -180)
    return [
      { north, south, west: west + 360, east: 180 },
      { north, south, west: -180, east },
    ];
  if (east > 180)
    return [
      { north, south, west, east: 180 },
      { north, south, west: -180, east: east - 360 },
    ];
  return [{ north, south, west, east }];
}

/** The tiles a map asks for, in order, over the pan pattern of every zoom (seeded: the same every run). */
function panPattern(): Map<number, Tile[]> {
  const random = seededRandom(19);
  const byZoom = new Map<number, Tile[]>();
  for (let zoom = 0; zoom <= MAX_ZOOM; zoom += 1) {
    const seen = new Set<string>();
    const tiles: Tile[] = [];
    // Two cities per zoom, weighted as the data is, each panned PANS times.
    for (let c = 0; c < 2; c += 1) {
      const city = CITIES[Math.floor(random() * CITIES.length)] as [string, number, number, number];
      let [lon, lat] = [city[1], city[2]];
      for (let pan = 0; pan <= PANS; pan += 1) {
        for (const box of viewport(zoom, lon, lat))
          for (const tile of tilesCovering(box, zoom)) {
            const key = `${tile.x}/${tile.y}`;
            if (!seen.has(key)) {
              seen.add(key);
              tiles.push(tile);
            }
          }
        const angle = random() * 2 * Math.PI;
        const step = (360 * 640) / (256 * 2 ** zoom);
        lon = ((lon + step * Math.cos(angle) + 540) % 360) - 180;
        lat = Math.max(-80, Math.min(80, lat + step * Math.sin(angle) * 0.6));
      }
    }
    byZoom.set(zoom, tiles);
  }
  return byZoom;
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}

async function main(): Promise<void> {
  const url = await benchDatabaseUrl();
  const pool = await createDatabasePool(url, { maximumPoolSize: 1, statementTimeoutMs: 60_000 });
  const reader = postgresEventReader(pool);
  const filter = parseEventFilter({});
  const pattern = panPattern();
  const total = await pool.oneFirst(sql.unsafe`select count(*)::int8 as n from events`);
  console.log(`tiles on ${url.replace(/:[^:@/]*@/, ':***@')}: ${total} events, ${os.cpus().length} cores`);

  // Warm: the whole pattern once (PostgreSQL's buffers, plans, the scope cache).
  for (const tiles of pattern.values()) for (const tile of tiles) await reader.vectorTile(null, filter, tile);

  type Row = {
    zoom: number;
    tiles: number;
    p50: number;
    p95: number;
    max: number;
    kb: number;
    naive?: { tiles: number; p50: number; p95: number; oursP50: number };
  };
  const rows: Row[] = [];
  for (const [zoom, tiles] of pattern) {
    const times: number[] = [];
    let bytes = 0;
    for (const tile of tiles) {
      const started = performance.now();
      const body = await reader.vectorTile(null, filter, tile);
      times.push(performance.now() - started);
      bytes += body.length;
    }
    const row: Row = {
      zoom,
      tiles: tiles.length,
      p50: percentile(times, 0.5),
      p95: percentile(times, 0.95),
      max: Math.max(...times),
      kb: bytes / tiles.length / 1024,
    };
    if (NAIVE_TILES > 0) {
      // The naive tile on tiles spread over the pattern, each beside ours on the same tile.
      const naive: number[] = [];
      const ours: number[] = [];
      const every = Math.max(1, Math.ceil(tiles.length / NAIVE_TILES));
      for (const tile of tiles.filter((_, i) => i % every === 0)) {
        let started = performance.now();
        await pool.oneFirst(naiveTile(tile));
        naive.push(performance.now() - started);
        started = performance.now();
        await reader.vectorTile(null, filter, tile);
        ours.push(performance.now() - started);
      }
      row.naive = {
        tiles: naive.length,
        p50: percentile(naive, 0.5),
        p95: percentile(naive, 0.95),
        oursP50: percentile(ours, 0.5),
      };
    }
    rows.push(row);
    const naiveText = row.naive
      ? `  naive p50 ${fmt(row.naive.p50)}  p95 ${fmt(row.naive.p95)} (${row.naive.tiles} tiles; ours on them p50 ${fmt(row.naive.oursP50)})`
      : '';
    console.log(
      `zoom ${String(zoom).padStart(2)}  ${String(row.tiles).padStart(3)} tiles  p50 ${fmt(row.p50)}  p95 ${fmt(row.p95)}  max ${fmt(row.max)}  ${row.kb.toFixed(1)} kB/tile${naiveText}`,
    );
  }
  const worst = { p50: Math.max(...rows.map((r) => r.p50)), p95: Math.max(...rows.map((r) => r.p95)) };
  console.log(`worst zoom: p50 ${fmt(worst.p50)} (target 20 ms), p95 ${fmt(worst.p95)} (target 60 ms)`);
  const directory = path.join(projectRoot, 'bench', 'results');
  mkdirSync(directory, { recursive: true });
  const file = path.join(directory, `tiles-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify({ events: total, load: os.loadavg(), rows }, null, 2)}\n`);
  console.log(`wrote ${path.relative(projectRoot, file)}`);
  await pool.end();
}

const fmt = (ms: number) => `${ms.toFixed(1).padStart(7)} ms`;

/** The naive tile: every event of the tile's box as a point with its id and title. */
function naiveTile(tile: Tile) {
  return sql.unsafe`
    select coalesce(st_asmvt(t, 'events', ${TILE_EXTENT}, 'geom'), ''::bytea) as tile
    from (select st_asmvtgeom(st_transform(e.location, 3857), st_tileenvelope(${tile.z}, ${tile.x}, ${tile.y}), ${TILE_EXTENT}, 0, false) as geom,
                 e.id, e.title
          from events e
          where e.location && st_transform(st_tileenvelope(${tile.z}, ${tile.x}, ${tile.y}), 4326)) t`;
}

await main();
