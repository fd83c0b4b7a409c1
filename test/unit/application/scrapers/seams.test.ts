import type { FastifyRequest } from 'fastify';
import t from 'tap';
import { ConfigError, loadConfig } from '../../../../src/adapters/config/environment.ts';
import { viewerFromRequest } from '../../../../src/adapters/http/scrapers/scraper-routes.ts';

// The seams other work plugs into: configuration variables, and the user an accounts plugin puts on the request.

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

t.test('the default authenticate reads request.viewer, and nothing else', async (t) => {
  const request = (viewer: unknown) =>
    ({
      viewer,
      user: { id: 9, role: 'admin', trustLevel: 5 },
      headers: { authorization: 'Bearer x' },
    }) as unknown as FastifyRequest;
  t.same(await viewerFromRequest(request({ id: 3, role: 'admin', trustLevel: 1, email: 'a@b.c' })), {
    id: 3,
    role: 'admin',
    trustLevel: 1,
  });
  t.same(await viewerFromRequest(request({ id: 4, role: 'user', trustLevel: 4, email: 'd@e.f' })), {
    id: 4,
    role: 'user',
    trustLevel: 4,
  });
  t.equal(
    await viewerFromRequest(request(null)),
    null,
    'a bearer header or request.user alone authenticates nobody',
  );
  t.equal(await viewerFromRequest(request(undefined)), null, 'an app without the accounts hooks');
});
