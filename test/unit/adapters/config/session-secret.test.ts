import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import {
  ConfigError,
  loadConfig,
  resolveSessionSecret,
} from '../../../../src/adapters/config/environment.ts';

t.test('SESSION_SECRET: given, generated once under the data dir, or required in production', async (t) => {
  const dataDir = t.testdir({});
  const given = loadConfig({ SESSION_SECRET: 's'.repeat(40), CHRONOMAP_DATA_DIR: dataDir });
  t.equal(resolveSessionSecret(given), 's'.repeat(40));

  const development = loadConfig({ CHRONOMAP_DATA_DIR: dataDir });
  const first = resolveSessionSecret(development);
  t.ok(first.length >= 32);
  t.equal(resolveSessionSecret(development), first, 'the same secret on the next start');
  const file = path.join(dataDir, 'session-secret');
  t.equal(readFileSync(file, 'utf8'), first);
  t.equal(statSync(file).mode & 0o777, 0o600, 'readable by its owner only');

  const production = { ...development, nodeEnv: 'production' as const };
  t.throws(() => resolveSessionSecret(production), ConfigError);
  t.throws(() => loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://x/y' }), {
    message: /SESSION_SECRET: is required when NODE_ENV=production/,
  });
});

t.test('QUOTAS_CONFIG names the quotas file', async (t) => {
  t.match(loadConfig({}).quotasFile, /config\/quotas\.yaml$/);
  t.equal(
    loadConfig({ QUOTAS_CONFIG: '/etc/chronomap/quotas.yaml' }).quotasFile,
    '/etc/chronomap/quotas.yaml',
  );
});
