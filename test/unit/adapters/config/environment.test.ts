import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os, { availableParallelism } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { ConfigError, loadConfig, missingVariables } from '../../../../src/adapters/config/environment.ts';
import { writePmtiles } from '../../../../src/adapters/files/pmtiles-writer.ts';

t.test('defaults need no variables at all', async (t) => {
  const config = loadConfig({});
  t.equal(config.port, 3000);
  t.equal(config.host, '127.0.0.1');
  t.equal(config.databaseUrl, undefined, 'no DATABASE_URL means the embedded database');
  t.equal(config.nodeEnv, 'development');
});

t.test('every bad variable is named in one error', async (t) => {
  const error = t.throws(() =>
    loadConfig({
      PORT: '99999',
      LOG_LEVEL: 'loud',
      DATABASE_URL: 'mysql://x/y',
      SCRAPER_RUNNER_URL: 'ftp://r',
    }),
  ) as ConfigError;
  t.ok(error instanceof ConfigError);
  t.same(error.problems.map((p) => p.variable).sort(), [
    'DATABASE_URL',
    'LOG_LEVEL',
    'PORT',
    'SCRAPER_RUNNER_URL',
  ]);
  t.match(error.message, /PORT: must be an integer from 0 to 65535 \(got "99999"\)/);
});

t.test('production requires a session secret and an explicit database', async (t) => {
  const error = t.throws(() => loadConfig({ NODE_ENV: 'production' })) as ConfigError;
  t.same(error.problems.map((p) => p.variable).sort(), ['DATABASE_URL', 'SESSION_SECRET']);
});

t.test('a runner URL needs the shared key of at least 16 characters', async (t) => {
  const missing = t.throws(() => loadConfig({ SCRAPER_RUNNER_URL: 'http://127.0.0.1:4000' })) as ConfigError;
  t.same(
    missing.problems.map((p) => p.variable),
    ['SCRAPER_API_KEY'],
  );
  const short = t.throws(() =>
    loadConfig({ SCRAPER_RUNNER_URL: 'http://127.0.0.1:4000', SCRAPER_API_KEY: 'short' }),
  ) as ConfigError;
  t.match(short.message, /SCRAPER_API_KEY: must be at least 16 characters/);
  const ok = loadConfig({ SCRAPER_RUNNER_URL: 'http://127.0.0.1:4000/', SCRAPER_API_KEY: 'k'.repeat(16) });
  t.equal(ok.scraperRunnerUrl, 'http://127.0.0.1:4000', 'trailing slash dropped');
  t.same(missingVariables(ok), []);
  t.same(missingVariables({ ...ok, scraperApiKey: undefined }), ['SCRAPER_API_KEY']);
});

t.test('READ_PARALLEL_WORKERS: none by default, a small integer when set', async (t) => {
  t.equal(loadConfig({}).readParallelWorkers, 0, 'the read pools start no parallel workers by default');
  t.equal(loadConfig({ READ_PARALLEL_WORKERS: '4' }).readParallelWorkers, 4);
  for (const bad of ['-1', '65', '1.5', 'two'])
    t.throws(
      () => loadConfig({ READ_PARALLEL_WORKERS: bad }),
      /READ_PARALLEL_WORKERS: must be an integer from 0 to 64/,
      `${bad} is refused`,
    );
});

t.test('TRUST_PROXY is an explicit true or false', async (t) => {
  t.equal(loadConfig({}).trustProxy, false);
  t.equal(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, true);
  t.throws(() => loadConfig({ TRUST_PROXY: 'yes' }), /TRUST_PROXY: must be one of true, false/);
});

t.test('PUBLIC_BASE_URL is where clients reach the service: scheme, host, port, path prefix', async (t) => {
  t.equal(loadConfig({}).publicBaseUrl, undefined, 'unset: links follow the address the client used');
  t.equal(
    loadConfig({ PUBLIC_BASE_URL: 'https://events.example.org/' }).publicBaseUrl,
    'https://events.example.org',
  );
  t.equal(
    loadConfig({ PUBLIC_BASE_URL: 'http://10.0.0.5:8080/chronomap/' }).publicBaseUrl,
    'http://10.0.0.5:8080/chronomap',
  );
  for (const bad of [
    'ftp://events.example.org',
    'https://events.example.org/?x=1',
    'https://u:p@events.example.org',
    'events',
  ]) {
    t.throws(() => loadConfig({ PUBLIC_BASE_URL: bad }), /PUBLIC_BASE_URL: /, bad);
  }
});

t.test('MAP_TILE_URL is an http(s) template with {z}, {x} and {y}', async (t) => {
  t.equal(loadConfig({}).mapTileUrl, undefined, 'country outlines only by default');
  const url = 'https://tiles.example.org/{z}/{x}/{y}.png';
  t.equal(loadConfig({ MAP_TILE_URL: url }).mapTileUrl, url);
  t.throws(
    () => loadConfig({ MAP_TILE_URL: 'https://tiles.example.org/{z}/{x}.png' }),
    /MAP_TILE_URL: .*\{y\} is missing/,
  );
  t.throws(() => loadConfig({ MAP_TILE_URL: 'file:///{z}/{x}/{y}.png' }), /MAP_TILE_URL: must be an http/);
  t.throws(() => loadConfig({ MAP_TILE_ATTRIBUTION: ' ' }), /MAP_TILE_ATTRIBUTION: must not be blank/);
});

t.test('API_PROCESSES: one per core up to four by default, one in tests, else 1 to 64', async (t) => {
  t.equal(loadConfig({}).apiProcesses, Math.min(4, availableParallelism()));
  t.equal(loadConfig({ NODE_ENV: 'test' }).apiProcesses, 1);
  t.equal(loadConfig({ API_PROCESSES: '3' }).apiProcesses, 3);
  for (const bad of ['0', '65', 'two', '1.5'])
    t.throws(() => loadConfig({ API_PROCESSES: bad }), /API_PROCESSES: must be an integer from 1 to 64/, bad);
});

t.test("MIGRATION_LOCK_*: the migrator's defaults unless set, bounded integers", async (t) => {
  t.same(loadConfig({}).migrationLocks, { lockTimeoutMs: undefined, attempts: undefined });
  t.same(loadConfig({ MIGRATION_LOCK_TIMEOUT_MS: '500', MIGRATION_LOCK_ATTEMPTS: '3' }).migrationLocks, {
    lockTimeoutMs: 500,
    attempts: 3,
  });
  const error = t.throws(() =>
    loadConfig({ MIGRATION_LOCK_TIMEOUT_MS: '0', MIGRATION_LOCK_ATTEMPTS: 'many' }),
  ) as ConfigError;
  t.same(error.problems.map((p) => p.variable).sort(), [
    'MIGRATION_LOCK_ATTEMPTS',
    'MIGRATION_LOCK_TIMEOUT_MS',
  ]);
});

t.test(
  'the geocoder: offline by default, an online fallback with the public policy, a threshold',
  async (t) => {
    t.same(loadConfig({}).ingest.geocoder, { kind: 'offline', minConfidence: 0.5 });
    t.same(loadConfig({ GEOCODER: 'off' }).ingest.geocoder, { kind: 'off' });
    t.match(loadConfig({ GEOCODER_FALLBACK: 'nominatim', GEOCODER_MIN_CONFIDENCE: '0.7' }).ingest.geocoder, {
      kind: 'offline',
      minConfidence: 0.7,
      fallback: {
        kind: 'nominatim',
        url: 'https://nominatim.openstreetmap.org',
        requestsPerSecond: 1,
        scheduledRequestsPerMinute: 4,
        maxRetryAfterMs: 60_000,
        userAgent: /^Chronomap\//,
        minConfidence: 0.7,
      },
    });
    t.match(
      loadConfig({
        GEOCODER: 'photon',
        GEOCODER_URL: 'http://photon.internal:2322/',
        GEOCODER_RATE_LIMIT: '50',
        GEOCODER_SCHEDULED_RATE_PER_MINUTE: '600',
      }).ingest.geocoder,
      {
        kind: 'photon',
        url: 'http://photon.internal:2322',
        requestsPerSecond: 50,
        scheduledRequestsPerMinute: 600,
      },
    );
    t.throws(
      () => loadConfig({ GEOCODER_MIN_CONFIDENCE: '2' }),
      /GEOCODER_MIN_CONFIDENCE: must be a number from 0 to 1/,
    );
    t.throws(
      () => loadConfig({ GEOCODER_FALLBACK: 'google' }),
      /GEOCODER_FALLBACK: must be one of off, nominatim, photon/,
    );
  },
);

t.test(
  'MAP_BASEMAP_PMTILES is a PMTiles v3 archive of vector tiles, not set with MAP_TILE_URL',
  async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'basemap-config-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const archive = path.join(dir, 'region.pmtiles');
    writeFileSync(
      archive,
      writePmtiles([{ z: 0, x: 0, y: 0, data: new Uint8Array([1]) }], {
        tileType: 'mvt',
        tileCompression: 'none',
      }),
    );
    t.equal(loadConfig({ MAP_BASEMAP_PMTILES: archive }).mapBasemapPmtiles, archive);
    t.throws(
      () => loadConfig({ MAP_BASEMAP_PMTILES: path.join(dir, 'missing.pmtiles') }),
      /MAP_BASEMAP_PMTILES: cannot read .*ENOENT/,
    );
    const png = path.join(dir, 'raster.pmtiles');
    writeFileSync(
      png,
      writePmtiles([{ z: 0, x: 0, y: 0, data: new Uint8Array([1]) }], {
        tileType: 'png',
        tileCompression: 'none',
      }),
    );
    t.throws(() => loadConfig({ MAP_BASEMAP_PMTILES: png }), /must hold vector tiles/);
    const other = path.join(dir, 'other.pmtiles');
    writeFileSync(other, 'not an archive at all');
    t.throws(() => loadConfig({ MAP_BASEMAP_PMTILES: other }), /is not a PMTiles archive/);
    t.throws(
      () =>
        loadConfig({
          MAP_BASEMAP_PMTILES: archive,
          MAP_TILE_URL: 'https://tiles.example.org/{z}/{x}/{y}.png',
        }),
      /MAP_BASEMAP_PMTILES: set it or MAP_TILE_URL, not both/,
    );
  },
);

t.test(
  'the replicas are bounded in time: lag in seconds, a timeout, and the byte bound refused',
  async (t) => {
    const defaults = loadConfig({});
    t.equal(defaults.replicaMaxLagSeconds, 10);
    t.equal(defaults.replicaTimeoutMs, 1000);
    const set = loadConfig({ REPLICA_MAX_LAG_SECONDS: '0.5', REPLICA_TIMEOUT_MS: '250' });
    t.equal(set.replicaMaxLagSeconds, 0.5);
    t.equal(set.replicaTimeoutMs, 250);
    t.throws(
      () => loadConfig({ REPLICA_MAX_LAG_SECONDS: '-1' }),
      /REPLICA_MAX_LAG_SECONDS: must be a number/,
    );
    t.throws(() => loadConfig({ REPLICA_TIMEOUT_MS: '10' }), /REPLICA_TIMEOUT_MS: must be an integer/);
    t.throws(
      () => loadConfig({ REPLICA_MAX_LAG_MB: '16' }),
      /REPLICA_MAX_LAG_MB: is gone.*REPLICA_MAX_LAG_SECONDS/,
    );
  },
);
