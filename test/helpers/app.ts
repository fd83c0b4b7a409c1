import type { FastifyInstance } from 'fastify';
import type { Test } from 'tap';
import type { Config } from '../../src/adapters/config/environment.ts';
import { loadConfig } from '../../src/adapters/config/environment.ts';
import { composeServices, type Services } from '../../src/compose.ts';
import { type TestDatabase, testDatabase } from './database.ts';

export function testConfig(overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({ NODE_ENV: 'test' }), ...overrides };
}

/** The whole service (HTTP + pg-boss) on a fresh test database, closed when the test ends. */
export async function testApp(
  t: Test,
  options: { config?: Partial<Config>; workers?: boolean } = {},
): Promise<{ app: FastifyInstance; services: Services; db: TestDatabase }> {
  const db = await testDatabase(t);
  const services = await composeServices(testConfig(options.config), db.url, {
    http: true,
    workers: options.workers ?? false,
  });
  t.teardown(() => services.close());
  if (!services.http) throw new Error('composeServices built no HTTP app');
  return { app: services.http, services, db };
}
