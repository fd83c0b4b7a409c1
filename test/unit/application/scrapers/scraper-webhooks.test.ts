import t from 'tap';
import { setScraperWebhook } from '../../../../src/application/scrapers/set-scraper-webhook.ts';
import { triggerScraperWebhook } from '../../../../src/application/scrapers/trigger-scraper-webhook.ts';
import { OWNER, ownedScraper, scraperUseCaseDeps, STRANGER } from './scraper-use-case-fakes.ts';

// A scraper's webhook on the shared in-memory stores: turning it on issues a token shown once,
// rotating or turning it off makes the old token unknown, and only a known token queues a run.

async function withWebhook() {
  const deps = scraperUseCaseDeps();
  const { scraper } = await ownedScraper(deps);
  const enabled = await setScraperWebhook(deps, OWNER, scraper.id, true);
  if (!enabled.token) throw new Error('enabling shows the token');
  return { deps, scraper, token: enabled.token };
}

t.test('the token of an enabled webhook queues a webhook run of its scraper', async (t) => {
  const { deps, scraper, token } = await withWebhook();
  t.match(await deps.scrapers.get(scraper.id), { webhookEnabled: true });
  const queued = await triggerScraperWebhook(deps, token);
  t.match(queued?.run, {
    scraperId: scraper.id,
    status: 'queued',
    triggeredBy: 'webhook',
    triggeredByUser: null,
  });
  t.same(deps.jobs.executions, [queued?.run.id]);
});

t.test('enabling again keeps the token; rotating issues a new one and the old one is unknown', async (t) => {
  const { deps, scraper, token } = await withWebhook();
  t.same(await setScraperWebhook(deps, OWNER, scraper.id, true), { webhookEnabled: true }, 'no token shown');
  t.ok(await triggerScraperWebhook(deps, token), 'the token still works');
  const rotated = await setScraperWebhook(deps, OWNER, scraper.id, true, { rotate: true });
  t.ok(rotated.token && rotated.token !== token, 'a new token');
  t.equal(await triggerScraperWebhook(deps, token), null, 'the old token is unknown');
  t.match(await triggerScraperWebhook(deps, rotated.token ?? ''), { run: { triggeredBy: 'webhook' } });
});

t.test('a disabled webhook forgets its token: it triggers nothing', async (t) => {
  const { deps, scraper, token } = await withWebhook();
  t.same(await setScraperWebhook(deps, OWNER, scraper.id, false), { webhookEnabled: false });
  t.match(await deps.scrapers.get(scraper.id), { webhookEnabled: false });
  t.equal(await triggerScraperWebhook(deps, token), null);
  t.same(deps.jobs.executions, []);
  const again = await setScraperWebhook(deps, OWNER, scraper.id, true);
  t.ok(again.token && again.token !== token, 'turning it on again issues a new token');
});

t.test('an unknown or malformed token belongs to no scraper', async (t) => {
  const { deps } = await withWebhook();
  t.equal(await triggerScraperWebhook(deps, 'a'.repeat(64)), null, 'a token never issued');
  t.equal(await triggerScraperWebhook(deps, 'not-a-token'), null);
  t.same(deps.jobs.executions, []);
});

t.test("only the repo's owner or an admin changes the webhook", async (t) => {
  const { deps, scraper, token } = await withWebhook();
  await t.rejects(setScraperWebhook(deps, STRANGER, scraper.id, false), {
    kind: 'forbidden',
    code: 'FORBIDDEN',
  });
  await t.rejects(setScraperWebhook(deps, OWNER, scraper.id + 100, true), { code: 'SCRAPER_NOT_FOUND' });
  t.ok(await triggerScraperWebhook(deps, token), 'the token still works');
});

t.test('a webhook run is refused while scrapers are switched off', async (t) => {
  const { deps, token } = await withWebhook();
  const off = { ...deps, flags: { isEnabled: async () => false } };
  await t.rejects(triggerScraperWebhook(off, token), { code: 'SCRAPERS_DISABLED' });
  t.same(deps.jobs.executions, []);
});
