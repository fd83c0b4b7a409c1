import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Test } from 'tap';
import type { Config } from '../../src/adapters/config/environment.ts';
import { loadConfig } from '../../src/adapters/config/environment.ts';
import { composeServices, type Services } from '../../src/compose.ts';
import type { Clock } from '../../src/ports/clock.ts';
import { type TestDatabase, testDatabase } from './database.ts';

export function testConfig(overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({ NODE_ENV: 'test' }), ...overrides };
}

/** The whole service (HTTP + pg-boss) on a fresh test database, closed when the test ends. */
const HOUR = 3_600_000;

/**
 * A clock that always reads the middle of the hour the test file started in. The rate limits count
 * in fixed windows starting at multiples of their length, so with the real clock a test crossing the
 * hour (or midnight) sees its counts reset; a pinned time makes such tests independent of when they
 * run, and stays within the two days the counters' clean-up keeps.
 */
export function pinnedClock(): Clock & { pinned: Date } {
  const pinned = new Date(Math.floor(Date.now() / HOUR) * HOUR + HOUR / 2);
  return { pinned, now: () => new Date(pinned) };
}

export async function testApp(
  t: Test,
  options: { config?: Partial<Config>; workers?: boolean; clock?: Clock } = {},
): Promise<{ app: FastifyInstance; services: Services; db: TestDatabase }> {
  const db = await testDatabase(t);
  // Each app keeps its materialised exports in a directory of its own, removed with the test.
  const exports = mkdtempSync(path.join(tmpdir(), 'chronomap-exports-'));
  t.teardown(() => rmSync(exports, { recursive: true, force: true }));
  const config = { exportCache: { directory: exports, maxBytes: 256 * 1024 * 1024 }, ...options.config };
  const services = await composeServices(
    testConfig(config),
    db.url,
    { http: true, workers: options.workers ?? false },
    options.clock ? { clock: options.clock } : {},
  );
  t.teardown(() => services.close());
  if (!services.http) throw new Error('composeServices built no HTTP app');
  return { app: services.http, services, db };
}
