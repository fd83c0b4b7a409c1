import t from 'tap';
import { ingestApp, upload, type UploadedDoc, waitForFile } from '../../fixtures/ingest/client.ts';

// The column mapped as the title at import is the event's title everywhere it is read: the event
// list, the GeoJSON and CSV exports, OGC API – Features items and the map's points (issue 28 §4).
// "Headline" is a name the Explore page could never have guessed from `data`.

const CSV = [
  'Headline,When,Lat,Lon,Venue',
  'Jazz night,2024-06-01T20:00:00Z,52.52,13.40,Club A',
  '"=Concert, outdoors",2024-06-02T18:00:00Z,52.50,13.42,Park',
].join('\n');

t.test('the mapped title column is the title of the API, the exports, OGC items and the map', async (t) => {
  const { app, catalogId } = await ingestApp(t, {}, true);
  const settings = {
    geocoding: false,
    dataset: { newDataset: { title: 'Gigs' } },
    fieldMapping: { title: 'Headline', timestamp: 'When', latitude: 'Lat', longitude: 'Lon' },
  };
  const response = await upload(
    app,
    catalogId,
    { name: 'gigs.csv', content: CSV },
    { settings: JSON.stringify(settings) },
  );
  t.equal(response.statusCode, 201, response.body);
  const doc = (response.json() as { doc: UploadedDoc }).doc;
  t.equal((await waitForFile(app, doc.id)).status, 'completed');

  const get = async (url: string) => app.inject({ method: 'GET', url });
  const list = (await get('/api/v1/events?sort=eventTimestamp')).json();
  t.same(
    list.events.map((e: { title: string }) => e.title),
    ['Jazz night', '=Concert, outdoors'],
    '/api/v1/events carries the title',
  );
  const slug = (await get('/api/v1/data-sources'))
    .json()
    .catalogs.flatMap((c: { datasets: { slug: string; title: string }[] }) => c.datasets)
    .find((d: { title: string }) => d.title === 'Gigs')?.slug;
  t.ok(slug, 'the new dataset is listed');

  const geojson = JSON.parse((await get('/api/v1/events.geojson?sort=eventTimestamp')).body);
  t.same(
    geojson.features.map((f: { properties: { title: string } }) => f.properties.title),
    ['Jazz night', '=Concert, outdoors'],
    'GeoJSON export',
  );
  const csv = (await get('/api/v1/events.csv?sort=eventTimestamp')).body.split('\r\n');
  t.match(csv[0], /^id,title,eventTimestamp,/);
  t.match(csv[1], /^\d+,Jazz night,2024-06-01T20:00:00\.000Z,/);
  t.match(csv[2], /^\d+,"'=Concert, outdoors",/, 'CSV export, a formula defused');

  const items = (await get(`/ogc/collections/${slug}/items`)).json();
  t.same(
    items.features.map((f: { properties: { title: string } }) => f.properties.title).sort(),
    ['=Concert, outdoors', 'Jazz night'],
    'OGC items',
  );
  const one = (await get(`/ogc/collections/${slug}/items/${list.events[0].id}`)).json();
  t.equal(one.properties.title, 'Jazz night', 'an OGC item');

  const points = (
    await get(
      `/api/v1/events/geo?zoom=16&bounds=${encodeURIComponent('{"north":53,"south":52,"east":14,"west":13}')}`,
    )
  ).json();
  t.same(
    points.features.map((f: { properties: { title: string } }) => f.properties.title).sort(),
    ['=Concert, outdoors', 'Jazz night'],
    'the map points',
  );
});
