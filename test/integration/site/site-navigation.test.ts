import t from 'tap';
import { SITE_NAV } from '../../../src/adapters/site-navigation.ts';
import { signIn } from '../../fixtures/ingest/client.ts';
import { testApp } from '../../helpers/app.ts';

// One navigation across the account pages and the Explore page (issue 29 §2): the same places in
// the same order everywhere, and a brand link to the person's own start page — the dashboard only
// for admins (a user sent there met "Admins only" with no way back).

const hrefsIn = (html: string, container: RegExp) =>
  [...(container.exec(html)?.[1] ?? '').matchAll(/<a href="([^"]+)"/g)].map((match) => match[1]);

const brandOf = (html: string) => /<a class="brand" href="([^"]+)"/.exec(html)?.[1];

t.test('the account pages and Explore share one navigation; the brand link goes home', async (t) => {
  const { app, db } = await testApp(t);
  const places = SITE_NAV.map(([href]) => href);

  const explore = await app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html' } });
  t.equal(explore.statusCode, 200);
  t.same(hrefsIn(explore.body, /<nav class="site" aria-label="Site">([\s\S]*?)<\/nav>/), places, 'Explore');
  t.match(
    explore.body,
    /<a href="\/" aria-current="page">Explore<\/a>/,
    'Explore marked as the current page',
  );

  const user = await signIn(app, db.pool, { role: 'user' });
  const admin = await signIn(app, db.pool, { role: 'admin' });
  for (const url of [
    '/account',
    '/account/imports',
    '/account/imports/new',
    '/account/scheduled-imports',
    '/account/scrapers',
    '/account/views',
  ]) {
    const asUser = await app.inject({
      method: 'GET',
      url,
      headers: { authorization: `Bearer ${user.token}` },
    });
    t.equal(asUser.statusCode, 200, url);
    t.same(
      hrefsIn(asUser.body, /<nav aria-label="Dashboard">([\s\S]*?)<\/nav>/),
      places,
      `${url}: the same places`,
    );
    t.equal(brandOf(asUser.body), '/account', `${url}: a user's brand link goes to their account`);
    const asAdmin = await app.inject({
      method: 'GET',
      url,
      headers: { authorization: `Bearer ${admin.token}` },
    });
    t.same(
      hrefsIn(asAdmin.body, /<nav aria-label="Dashboard">([\s\S]*?)<\/nav>/),
      ['/dashboard', ...places],
      `${url}: an admin also gets the dashboard`,
    );
    t.equal(brandOf(asAdmin.body), '/dashboard', `${url}: an admin's brand link goes to the dashboard`);
  }
  const login = await app.inject({ method: 'GET', url: '/account/login' });
  t.equal(brandOf(login.body), '/', 'before logging in, the brand link goes to Explore');
});
