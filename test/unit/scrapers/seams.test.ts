import type { FastifyRequest } from 'fastify';
import t from 'tap';
import { ConfigError, loadConfig } from '../../../src/adapters/config/environment.ts';
import { userFromRequest } from '../../../src/adapters/http/routes/scrapers.ts';
import { environmentFeatureFlags } from '../../../src/adapters/scrapers/scraper-support.ts';

// The seams other work plugs into: the flag variable, and the user an accounts plugin puts on the request.

t.test(
  'CHRONOMAP_ENABLE_SCRAPERS: off by default, true/false/1/0, anything else names the variable',
  async (t) => {
    t.equal(loadConfig({}).enableScrapers, false);
    t.equal(loadConfig({ CHRONOMAP_ENABLE_SCRAPERS: 'true' }).enableScrapers, true);
    t.equal(loadConfig({ CHRONOMAP_ENABLE_SCRAPERS: '0' }).enableScrapers, false);
    t.throws(() => loadConfig({ CHRONOMAP_ENABLE_SCRAPERS: 'yes' }), {
      constructor: ConfigError,
      message: /CHRONOMAP_ENABLE_SCRAPERS: must be true or false/,
    });
    t.equal(await environmentFeatureFlags(true).isEnabled('enableScrapers'), true);
    t.equal(await environmentFeatureFlags(false).isEnabled('enableScrapers'), false);
  },
);

t.test('the default authenticate reads request.user, and nothing else', async (t) => {
  const request = (user: unknown) =>
    ({ user, headers: { authorization: 'Bearer x' } }) as unknown as FastifyRequest;
  t.same(await userFromRequest(request({ id: 3, role: 'admin', trustLevel: 1, email: 'a@b.c' })), {
    id: 3,
    role: 'admin',
    trustLevel: 1,
  });
  t.same(await userFromRequest(request({ id: 4, role: 'user', trustLevel: '4' })), {
    id: 4,
    role: 'user',
    trustLevel: 4,
  });
  t.equal(await userFromRequest(request(undefined)), null, 'a bearer header alone authenticates nobody');
  t.equal(await userFromRequest(request({ email: 'no-id@example.org' })), null);
});
