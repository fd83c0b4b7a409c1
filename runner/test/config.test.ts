import t from 'tap';
import { ConfigError, loadConfig } from '../src/config.ts';

const key = { SCRAPER_API_KEY: 'k'.repeat(16) };

t.test('defaults follow the spec', async (t) => {
  const c = loadConfig(key);
  t.match(c, {
    port: 4000,
    maxConcurrent: 3,
    defaultTimeoutSecs: 300,
    defaultMemoryMb: 512,
    maxRepoSizeMb: 50,
    maxOutputSizeMb: 100,
    nodeEnv: 'development',
    allowLoopbackGit: false,
    network: 'scraper-sandbox',
  });
});

t.test('the API key is required and at least 16 characters', async (t) => {
  t.throws(
    () => loadConfig({}),
    new ConfigError(
      "SCRAPER_API_KEY is required (a random secret of at least 16 characters, the same as the main application's)",
    ),
  );
  t.throws(() => loadConfig({ SCRAPER_API_KEY: 'k'.repeat(15) }), /at least 16 characters, it has 15/);
});

t.test('every SCRAPER_* value is validated with a message naming it', async (t) => {
  const bad: Record<string, RegExp> = {
    SCRAPER_PORT: /SCRAPER_PORT must be a whole number/,
    SCRAPER_MAX_CONCURRENT: /SCRAPER_MAX_CONCURRENT must be/,
    SCRAPER_DEFAULT_TIMEOUT: /SCRAPER_DEFAULT_TIMEOUT must be/,
    SCRAPER_DEFAULT_MEMORY: /SCRAPER_DEFAULT_MEMORY must be/,
    SCRAPER_MAX_REPO_SIZE_MB: /SCRAPER_MAX_REPO_SIZE_MB must be/,
    SCRAPER_MAX_OUTPUT_SIZE_MB: /SCRAPER_MAX_OUTPUT_SIZE_MB must be/,
    SCRAPER_ALLOW_LOOPBACK_GIT: /SCRAPER_ALLOW_LOOPBACK_GIT must be true or false/,
    SCRAPER_CPUS: /SCRAPER_CPUS must be a number/,
  };
  for (const [name, message] of Object.entries(bad))
    t.throws(() => loadConfig({ ...key, [name]: 'lots' }), message, name);
  t.throws(() => loadConfig({ ...key, SCRAPER_DEFAULT_MEMORY: '32' }), /between 64 and 4096, got 32/);
  t.throws(() => loadConfig({ ...key, SCRAPER_DEFAULT_TIMEOUT: '3601' }), /between 1 and 3600/);
  t.throws(() => loadConfig({ ...key, SCRAPER_DNS: '1.1.1.1;rm' }), /SCRAPER_DNS has an invalid value/);
  t.throws(
    () => loadConfig({ ...key, SCRAPER_MAX_CONCURENT: '3' }),
    /unknown variable SCRAPER_MAX_CONCURENT/,
  );
});

t.test('the loopback flag and overrides are read', async (t) => {
  const c = loadConfig({
    ...key,
    SCRAPER_ALLOW_LOOPBACK_GIT: 'true',
    SCRAPER_PORT: '4100',
    SCRAPER_DNS: '9.9.9.9,1.0.0.1',
    SCRAPER_RUNNER_URL: 'http://x',
  });
  t.equal(c.allowLoopbackGit, true);
  t.equal(c.port, 4100);
  t.same(c.dnsServers, ['9.9.9.9', '1.0.0.1']);
});
