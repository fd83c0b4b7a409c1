import t from 'tap';
import { ConfigError, loadConfig } from '../../../../src/adapters/config/environment.ts';

// The seams other work plugs into: configuration variables. (The user an accounts plugin puts on the
// request is read by viewerOf: test/unit/adapters/http/viewer.test.ts.)

t.test(
  'SCRAPER_ALLOW_LOOPBACK_GIT: off by default, true/false/1/0, anything else names the variable',
  async (t) => {
    t.equal(loadConfig({}).scraperAllowLoopbackGit, false);
    t.equal(loadConfig({ SCRAPER_ALLOW_LOOPBACK_GIT: 'true' }).scraperAllowLoopbackGit, true);
    t.equal(loadConfig({ SCRAPER_ALLOW_LOOPBACK_GIT: '0' }).scraperAllowLoopbackGit, false);
    t.throws(() => loadConfig({ SCRAPER_ALLOW_LOOPBACK_GIT: 'yes' }), {
      constructor: ConfigError,
      message: /SCRAPER_ALLOW_LOOPBACK_GIT: must be true or false/,
    });
  },
);

t.test('enableScrapers is no longer read from the environment: the admin switches it', async (t) => {
  t.notOk('enableScrapers' in loadConfig({ CHRONOMAP_ENABLE_SCRAPERS: 'true' }));
});
