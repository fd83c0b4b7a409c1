import t from 'tap';
import { ingestApp, signIn, upload, type UploadedDoc, waitForFile } from '../../fixtures/ingest/client.ts';

// "Download in the browser" (issue 28 §6): My imports links a completed import's data (Explore
// filtered to its dataset, its CSV and GeoJSON exports), the dashboard's dataset page links the
// same, and /account prepares the account's own-data export and links its ZIP. The links are
// followed here and must answer with the dataset's events.

const CSV =
  'time,latitude,longitude,title\n2026-01-01T00:00:00Z,52.5,13.4,Alpha\n2026-01-02T00:00:00Z,48.8,2.3,Beta\n';

/** The hrefs of one dataset's data links on a page, by kind. */
function dataLinks(body: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const match of body.matchAll(/<a href="([^"]+)"(?: download)? data-link="(\w+)"/g))
    found[match[2] as string] = (match[1] as string).replaceAll('&amp;', '&');
  return found;
}

t.test(
  "My imports and the dataset's page link a completed import's data, and the links answer",
  async (t) => {
    const { app, db, catalogId, user } = await ingestApp(t);
    const doc = (
      (await upload(app, catalogId, { name: 'links.csv', content: CSV })).json() as { doc: UploadedDoc }
    ).doc;
    await waitForFile(app, doc.id);
    const as = (token: string, url: string) =>
      app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });

    const page = await as(user.token, '/account/imports');
    t.equal(page.statusCode, 200);
    const links = dataLinks(page.body);
    const slug = /data-dataset-links="([^"]+)"/.exec(page.body)?.[1] ?? '';
    t.ok(slug, 'the completed import names its dataset');
    t.same(links, {
      explore: `/?datasets=${slug}`,
      csv: `/api/v1/events.csv?datasets=${slug}`,
      geojson: `/api/v1/events.geojson?datasets=${slug}`,
    });

    const explore = await as(user.token, links.explore as string);
    t.equal(explore.statusCode, 200, 'Explore opens with the filter');
    const csv = await as(user.token, links.csv as string);
    t.equal(csv.statusCode, 200);
    const lines = csv.body.trim().split('\r\n');
    t.equal(lines.length, 3, 'the header and both events');
    t.ok(
      lines.slice(1).every((line) => line.includes(`,${slug},`)),
      "every row is the dataset's",
    );
    const geojson = await as(user.token, links.geojson as string);
    t.equal(geojson.statusCode, 200);
    const features = (geojson.json() as { features: { properties: { dataset: string; title: string } }[] })
      .features;
    t.same(features.map((f) => [f.properties.dataset, f.properties.title]).sort(), [
      [slug, 'Alpha'],
      [slug, 'Beta'],
    ]);

    const admin = await signIn(app, db.pool, { role: 'admin' });
    const datasetId = doc.jobs[0]?.dataset as number;
    const datasetPage = await as(admin.token, `/dashboard/datasets/${datasetId}`);
    t.equal(datasetPage.statusCode, 200);
    t.same(dataLinks(datasetPage.body), links, "the dataset's page links the same data, from the same place");

    const stranger = await signIn(app, db.pool);
    const theirs = await as(stranger.token, '/account/imports');
    t.notMatch(theirs.body, /data-dataset-links/, "a stranger's My imports links nothing of it");
  },
);

t.test('/account prepares the export of all the account holds and links its ZIP', async (t) => {
  const { app, user } = await ingestApp(t);
  const anonymous = await app.inject({ method: 'GET', url: '/account' });
  t.equal(anonymous.statusCode, 303);
  t.equal(anonymous.headers.location, '/account/login?next=%2Faccount');

  const headers = { authorization: `Bearer ${user.token}` };
  const first = await app.inject({ method: 'GET', url: '/account', headers });
  t.equal(first.statusCode, 200);
  t.match(first.body, user.email);
  t.notMatch(first.body, /account-export-download/, 'nothing to download before an export is asked for');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(first.body)?.[1] ?? '';
  const cookie = String(first.headers['set-cookie']).split(';')[0] ?? '';
  const post = (fields: Record<string, string>) =>
    app.inject({
      method: 'POST',
      url: '/account/data-export',
      headers: { ...headers, cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(fields).toString(),
    });

  t.equal((await post({})).statusCode, 403, 'without the form token: refused');
  const requested = await post({ _csrf: csrf });
  t.equal(requested.statusCode, 303);
  t.match(String(requested.headers.location), /^\/account\?notice=/);
  const again = await post({ _csrf: csrf });
  t.match(
    new URL(String(again.headers.location), 'http://x').searchParams.get('error'),
    /being built already/,
    'a second request while one is prepared is refused in words',
  );

  let body = '';
  for (let i = 0; i < 120 && !/account-export-download/.test(body); i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 250));
    body = (await app.inject({ method: 'GET', url: '/account', headers })).body;
  }
  const href = /id="account-export-download" href="([^"]+)"/.exec(body)?.[1] ?? '';
  t.match(href, /^\/api\/data-exports\/\d+\/download$/);
  const zip = await app.inject({ method: 'GET', url: href, headers });
  t.equal(zip.statusCode, 200);
  t.equal(zip.headers['content-type'], 'application/zip');
  t.equal(zip.rawPayload.subarray(0, 2).toString(), 'PK', 'a ZIP');
});
