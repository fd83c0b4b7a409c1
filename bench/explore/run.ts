// Measures the Explore page in Chromium against the read-API benchmark data set (1M events; build it
// with bench/read-api/generate.ts): for several views, the time from a pan/zoom to the clusters
// drawn and to the histogram drawn, and the long tasks (main thread busy > 50 ms) meanwhile. The
// baseline, measured in the same run, is the API alone: the same requests fetched from Node, so
// what the page adds on top of the API is the difference (its 200 ms debounce included).
//
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/chronomap_bench_explore \
//     node bench/explore/run.ts [--repeat 5] [--mode markers|tiles|auto] [--far]
//
// --far pans by a whole screen width per move (every move shows a new place: no answer or tile the
// page or MapLibre already holds) instead of alternating between two nearby centres.
//
// --mode tiles measures the vector-tile mode (web/explore/tiles.js): "clusters ms" is then the time
// from the move to the map idle with the tiles drawn (MapLibre fetches them at once, without the
// page's debounce), and the API baseline is not measured (MapLibre's worker makes the requests).
// --mode auto measures the page's default (no `mode` in the URL): it draws tiles while the keyboard
// is not used, so it is timed as tiles; the run shows that the default is what it claims to be.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Page } from 'playwright-core';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { loadConfig, projectRoot } from '../../src/adapters/config/environment.ts';
import { composeServices } from '../../src/compose.ts';
import { unlimitedAnonymousReads } from '../../test/helpers/accounts.ts';
import { openChromium } from '../../test/helpers/browser.ts';
import { benchDatabaseUrl, withClient } from '../read-api/bench-database.ts';

const { values: options } = parseArgs({
  options: {
    repeat: { type: 'string', default: '5' },
    mode: { type: 'string', default: 'markers' },
    far: { type: 'boolean', default: false },
  },
});
const REPEAT = Number(options.repeat);
const MODE = options.mode === 'tiles' || options.mode === 'auto' ? options.mode : 'markers';
/** Whether the page draws vector tiles in this run (automatic mode does, without the keyboard). */
const TILES = MODE !== 'markers';
/** The mode in the page's URL: none for automatic, the page's default. */
const MODE_PARAM = MODE === 'auto' ? '' : `&mode=${MODE}`;
const DEBOUNCE_MS = 200; // web/explore/app.js

type View = { name: string; lng: number; lat: number; zoom: number; query?: string };
const VIEWS: View[] = [
  { name: 'world', lng: 10, lat: 25, zoom: 1.2 },
  { name: 'Europe', lng: 10, lat: 50, zoom: 4 },
  { name: 'Tokyo region', lng: 139.7, lat: 35.7, zoom: 8 },
  { name: 'New York city', lng: -74, lat: 40.71, zoom: 12 },
  { name: 'Tokyo street', lng: 139.69, lat: 35.69, zoom: 15.5 },
  { name: 'world, one dataset', lng: 10, lat: 25, zoom: 1.2, query: 'datasets=city-data-1' },
  { name: 'Europe, one year', lng: 10, lat: 50, zoom: 4, query: 'startDate=2020-01-01&endDate=2020-12-31' },
  { name: 'world, one catalog', lng: 10, lat: 25, zoom: 1.2, query: 'catalog=culture' },
];

type Sample = { clusters: number; histogram: number; longTasks: number; longest: number; markers: number };

// Code run in the page is written as strings: this project's TypeScript has no DOM types.
const COLLECT_LONG_TASKS = `
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.__longTasks.push({ start: entry.startTime, duration: entry.duration });
  }).observe({ type: 'longtask', buffered: true });`;

async function waitFor(page: Page, expression: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await page.evaluate<boolean>(expression))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${expression}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const settledAfter = (generation: number) =>
  `Number(document.body.dataset.generation ?? 0) > ${generation} && !document.body.hasAttribute('data-loading')`;

/** Move the map (as a pan or zoom would) and time the redraw, in the page's own clock. */
async function measureMove(page: Page, view: View, nudge: number): Promise<Sample> {
  const generation = await page.evaluate<number>('Number(document.body.dataset.generation ?? 0)');
  const started = await page.evaluate<number>(`(() => {
    const t0 = performance.now();
    window.explore.map.jumpTo({ center: [${view.lng + nudge}, ${view.lat}], zoom: ${view.zoom} });
    return t0;
  })()`);
  // The tiles are drawn when the map is idle, which may come after the page's refresh.
  await waitFor(
    page,
    `${settledAfter(generation)}${TILES ? " && document.body.hasAttribute('data-map-idle')" : ''}`,
  );
  return page.evaluate<Sample>(`(() => {
    const after = (name) => performance.getEntriesByName(name).filter((e) => e.startTime >= ${started}).at(-1);
    const tasks = window.__longTasks.filter((task) => task.start + task.duration >= ${started});
    return {
      clusters: after('${TILES ? 'explore:tiles-drawn' : 'explore:clusters-drawn'}').startTime - ${started},
      histogram: after('explore:histogram-drawn').startTime - ${started},
      longTasks: tasks.reduce((sum, task) => sum + task.duration, 0),
      longest: Math.max(0, ...tasks.map((task) => task.duration)),
      markers: window.explore.status.clusters,
    };
  })()`);
}

/** The baseline: the page's requests for the view it shows now, fetched from Node. */
async function measureApi(page: Page, base: string): Promise<{ geo: number; temporal: number }> {
  const urls = await page.evaluate<string[]>(
    `performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.includes('/api/v1/'))`,
  );
  const last = (part: string) => urls.filter((url) => new URL(url).pathname === part).at(-1);
  const geo = last('/api/v1/events/geo');
  const stats = last('/api/v1/events/geo/stats');
  const temporal = last('/api/v1/events/temporal');
  if (!geo || !stats || !temporal) throw new Error('the page made no API requests');
  const timed = async (targets: string[]) => {
    const start = performance.now();
    await Promise.all(
      targets.map(async (target) => {
        const response = await fetch(target.replace(/^http:\/\/[^/]+/, base));
        await response.arrayBuffer();
        if (!response.ok) throw new Error(`${target}: ${response.status}`);
      }),
    );
    return performance.now() - start;
  };
  return { geo: await timed([geo, stats]), temporal: await timed([temporal]) };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
};

/** The shipped policy with the anonymous rate limit lifted: the benchmark is one IP firing many requests. */
function policyWithoutAnonymousLimit(): string {
  const policy = parseYaml(
    readFileSync(path.join(projectRoot, 'config', 'quotas.yaml'), 'utf8'),
  ) as Parameters<typeof unlimitedAnonymousReads>[0];
  unlimitedAnonymousReads(policy);
  const file = path.join(os.tmpdir(), `chronomap-explore-bench-${process.pid}.yaml`);
  writeFileSync(file, stringifyYaml(policy));
  return file;
}

async function main(): Promise<void> {
  const databaseUrl = await benchDatabaseUrl();
  const total = await withClient(databaseUrl, async (client) =>
    Number((await client.query('select count(*) as n from events')).rows[0].n),
  );
  if (total === 0) throw new Error('the benchmark database is empty: run bench/read-api/generate.ts first');
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'production',
    SESSION_SECRET: 'explore-benchmark-secret-explore-benchmark',
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'warn',
    QUOTAS_CONFIG: policyWithoutAnonymousLimit(),
  });
  const services = await composeServices(config, databaseUrl, { http: true, workers: false });
  const app = services.http;
  if (!app) throw new Error('no HTTP app');
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const load = () =>
    os
      .loadavg()
      .map((value) => value.toFixed(2))
      .join(' ');
  console.log(
    `${total} events; ${MODE === 'auto' ? 'automatic (vector-tile)' : TILES ? 'vector-tile' : 'marker'} mode; Chromium 1280x800, WebGL on SwiftShader; load average before: ${load()}`,
  );

  const browser = await openChromium({ webgl: true });
  const rows: Array<Record<string, string | number>> = [];
  try {
    for (const view of VIEWS) {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      await page.addInitScript(COLLECT_LONG_TASKS);
      const loadStart = Date.now();
      await page.goto(
        `${base}/?lng=${view.lng + 20}&lat=${view.lat}&zoom=${Math.max(1, view.zoom - 2)}${view.query ? `&${view.query}` : ''}${MODE_PARAM}`,
      );
      await waitFor(page, settledAfter(0));
      const firstLoad = Date.now() - loadStart;
      const drawing = await page.evaluate<string>("document.getElementById('map').dataset.drawing");
      if (drawing !== (TILES ? 'tiles' : 'markers'))
        throw new Error(`the page draws ${drawing} in ${MODE} mode`);
      const samples: Sample[] = [];
      const api: Array<{ geo: number; temporal: number }> = [];
      for (let i = 0; i < REPEAT; i++) {
        // Alternate between two nearby centres so that no two requests in a row are the same.
        const nudge = options.far
          ? ((i + 1) * (360 * 1280)) / (512 * 2 ** view.zoom)
          : (i % 2) * (0.5 / 2 ** view.zoom);
        samples.push(await measureMove(page, view, nudge));
        if (!TILES) api.push(await measureApi(page, base));
      }
      const row = {
        view: view.name,
        markers: samples.at(-1)?.markers ?? 0,
        'first load ms': firstLoad,
        'clusters ms': Math.round(median(samples.map((s) => s.clusters))),
        'API geo+stats ms': Math.round(median(api.map((a) => a.geo))),
        'histogram ms': Math.round(median(samples.map((s) => s.histogram))),
        'API temporal ms': Math.round(median(api.map((a) => a.temporal))),
        'long tasks ms': Math.round(median(samples.map((s) => s.longTasks))),
        'longest task ms': Math.round(Math.max(...samples.map((s) => s.longest))),
      };
      rows.push(row);
      console.error(JSON.stringify(row));
      await page.context().close();
    }
  } finally {
    await browser.close();
    await services.close();
  }
  console.log(
    `median of ${REPEAT} moves per view; page times include the ${DEBOUNCE_MS} ms debounce; load average after: ${load()}`,
  );
  console.table(rows);
  const dir = path.join(projectRoot, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `explore-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ total, mode: MODE, repeat: REPEAT, rows, loadAverage: os.loadavg() }, null, 2)}\n`,
  );
  console.log(`written to ${path.relative(projectRoot, file)}`);
}

await main();
