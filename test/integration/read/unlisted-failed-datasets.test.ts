import t from 'tap';
import { ensureDataset } from '../../helpers/collections.ts';
import { ingestApp, upload, type UploadedDoc, waitForFile } from '../../fixtures/ingest/client.ts';

// "Nothing left behind" (issue 28 §7, docs/decisions.md): the new dataset of a first import that
// failed holds no event and is not listed by Explore's source (/api/v1/data-sources), the OGC
// collections or /api/v1/sources/stats, for its owner or anyone; it stays where its owner manages
// it, and it is listed as soon as an import into it completes. An empty dataset made on purpose is
// listed as before.

type Sources = { catalogs: { datasets: { id: number; slug: string }[] }[] };

t.test('a dataset whose only import failed is not listed; listed once an import fills it', async (t) => {
  const { app, db, catalogId, user } = await ingestApp(t);
  const as = (url: string) =>
    app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${user.token}` } });
  const listedIds = async () =>
    ((await as('/api/v1/data-sources')).json() as Sources).catalogs.flatMap((c) =>
      c.datasets.map((d) => d.id),
    );

  // A failure the user can mend (re-configure the mapping): the dataset stays for the retry. (An
  // unreadable file's new dataset is removed outright: discardCreatedDataset.)
  const bad = await upload(app, catalogId, { name: 'broken.csv', content: 'name\nAda\nGrace\n' });
  t.equal(bad.statusCode, 201, bad.body);
  const doc = (bad.json() as { doc: UploadedDoc }).doc;
  t.equal((await waitForFile(app, doc.id)).status, 'failed');
  const failedDataset = doc.datasets[0] as number;

  const onPurpose = await ensureDataset(db.pool, catalogId, {
    slug: 'on-purpose',
    title: 'On purpose',
    isPublic: true,
  });
  const listed = await listedIds();
  t.notOk(listed.includes(failedDataset), "Explore's filters do not offer the failed import's dataset");
  t.ok(listed.includes(onPurpose), 'an empty dataset made on purpose is listed');
  const stats = (await as('/api/v1/sources/stats')).json() as { datasetCounts: Record<string, number> };
  t.notOk(String(failedDataset) in stats.datasetCounts, 'nor do the source stats');
  const own = await as(`/api/datasets/${failedDataset}`);
  t.equal(own.statusCode, 200, `its owner still finds it (to retry, re-configure or delete): ${own.body}`);
  const slug = (own.json() as { slug: string }).slug;
  const ogc = (await as('/ogc/collections')).json() as { collections: { id: string }[] };
  const ogcIds = ogc.collections.map((c) => c.id);
  t.ok(ogcIds.includes('on-purpose'), 'the OGC collections list the datasets');
  t.notOk(ogcIds.includes(slug), "but not the failed import's");

  // The same dataset, filled by an import that completes: listed from then on.
  const good = await upload(
    app,
    catalogId,
    { name: 'good.csv', content: 'time,latitude,longitude\n2026-01-01T00:00:00Z,52.5,13.4\n' },
    { dataset: String(failedDataset) },
  );
  t.equal(good.statusCode, 201, good.body);
  t.equal((await waitForFile(app, (good.json() as { doc: UploadedDoc }).doc.id)).status, 'completed');
  t.ok((await listedIds()).includes(failedDataset), 'listed once an import into it completed');
});
