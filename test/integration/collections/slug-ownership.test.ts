import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { ensureDataset } from '../../helpers/collections.ts';
import { ingestApp, multipart, signIn, type UploadedDoc, waitForFile } from '../../fixtures/ingest/client.ts';

// "Anything that looks records up by slug" (issue 28 §7): slugs are unique (catalogs and datasets
// across the service, scraper repos too), so a user who names another user's slug must never reach
// that record. Creating with a taken slug is a 409 that changes nothing; an import named like
// someone's private dataset gets a slug of its own; writes go by id, and someone else's id is a 404.
// (A scraper repo's taken slug: scraper-collections.test.ts; a scraper's slug is looked up within
// its own repo only, scraper-store.ts; the demo's collections by key: seed-and-admin.test.ts.)

const Described = row(
  Type.Object({
    title: Type.String(),
    catalog_id: Type.Number(),
    created_by: Type.Union([Type.Number(), Type.Null()]),
  }),
);

t.test("a slug never reaches another user's catalog or dataset", async (t) => {
  const { app, db, catalogId } = await ingestApp(t);
  const privateDataset = await ensureDataset(db.pool, catalogId, {
    slug: 'secret-places',
    title: 'Secret places',
    isPublic: false,
  });
  const before = async () => ({
    catalog: await db.pool.one(sql.type(Described)`
      select title, id as catalog_id, created_by from catalogs where id = ${catalogId}`),
    dataset: await db.pool.one(sql.type(Described)`
      select title, catalog_id, created_by from datasets where id = ${privateDataset}`),
    events: await db.pool.oneFirst(sql.type(row(Type.Object({ n: Type.Number() })))`
      select count(*)::int as n from events where dataset_id = ${privateDataset}`),
  });
  const original = await before();

  const stranger = await signIn(app, db.pool, { trustLevel: 5 });
  const api = (method: 'POST' | 'PATCH', url: string, payload: object) =>
    app.inject({ method, url, payload, headers: { authorization: `Bearer ${stranger.token}` } });

  const theirs = await api('POST', '/api/catalogs', { slug: 'strangers', title: 'Mine', isPublic: true });
  t.equal(theirs.statusCode, 201, theirs.body);
  const theirCatalog = (theirs.json() as { doc: { id: number } }).doc.id;

  const takenCatalog = await api('POST', '/api/catalogs', { slug: 'imports', title: 'Taken over' });
  t.equal(takenCatalog.statusCode, 409, "another user's catalog slug: a conflict, not an overwrite");
  const takenDataset = await api('POST', '/api/datasets', {
    catalog: theirCatalog,
    slug: 'secret-places',
    title: 'Taken over',
  });
  t.equal(takenDataset.statusCode, 409, "another user's private dataset slug: a conflict");
  const renamed = await api('PATCH', `/api/datasets/${privateDataset}`, { title: 'Taken over' });
  t.equal(renamed.statusCode, 404, 'writes go by id, and not yours is not there');

  // An import whose name makes the other user's slug: a dataset of its own, the other one untouched.
  const body = multipart(
    { catalog: String(theirCatalog) },
    { name: 'secret places.csv', content: 'time,latitude,longitude\n2026-01-01T00:00:00Z,52.5,13.4\n' },
  );
  const imported = await app.inject({
    method: 'POST',
    url: '/api/ingest-files',
    payload: body.payload,
    headers: { ...body.headers, authorization: `Bearer ${stranger.token}` },
  });
  t.equal(imported.statusCode, 201, imported.body);
  const doc = (imported.json() as { doc: UploadedDoc }).doc;
  t.equal((await waitForFile(app, doc.id)).status, 'completed');
  t.not(doc.datasets[0], privateDataset, 'the import got a dataset of its own');
  const slug = await db.pool.oneFirst(sql.type(row(Type.Object({ slug: Type.String() })))`
    select slug from datasets where id = ${doc.datasets[0] as number}`);
  t.match(slug, /^secret-places-/, 'with the next free slug');

  t.same(await before(), original, "the other user's catalog and dataset are as they were, with no events");
});
