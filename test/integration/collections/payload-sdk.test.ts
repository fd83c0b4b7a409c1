import type { AddressInfo } from 'node:net';
import { PayloadSDK, PayloadSDKError } from '@payloadcms/sdk';
import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { policyFile } from '../../helpers/accounts.ts';
import { insertLargeEvents } from '../../helpers/v1-fixture.ts';
import { ingestApp, multipart } from '../../fixtures/ingest/client.ts';

// Issue 35 §6: Payload's own client, @payloadcms/sdk, over a real socket: count, select,
// pagination=false (with its cap) and an upload sent as Payload sends it (`file` + `_payload`).

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the SDK is typed by a Payload config this service does not have
type AnySdk = PayloadSDK<any>;

/** The SDK's error for a refused request (the test fails when the request succeeds). */
async function refusal(request: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await request;
  } catch (error) {
    if (error instanceof PayloadSDKError) return { status: error.status, message: error.message };
    throw error;
  }
  throw new Error('the request was not refused');
}

const CSV = 'time,title,latitude,longitude\n2024-01-01T00:00:00Z,a,1,2\n2024-01-02T00:00:00Z,b,3,4\n';

t.test('@payloadcms/sdk: count, select, pagination=false and _payload uploads', async (t) => {
  const { app, db, catalogId, user } = await ingestApp(t, {}, false, { quotasFile: policyFile(t) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const sdk: AnySdk = new PayloadSDK({
    baseURL: `http://127.0.0.1:${port}/api`,
    baseInit: { headers: { Authorization: `JWT ${user.token}` } },
  });
  for (let i = 1; i <= 12; i += 1)
    await sdk.create({
      collection: 'catalogs',
      data: { slug: `sdk-${i}`, title: `SDK ${i}`, isPublic: true },
    });

  t.test('count', async (t) => {
    t.same(await sdk.count({ collection: 'catalogs', where: { slug: { like: 'sdk-' } } }), { totalDocs: 12 });
    t.same(await sdk.count({ collection: 'catalogs', where: { slug: { equals: 'sdk-3' } } }), {
      totalDocs: 1,
    });
    const all = await sdk.find({ collection: 'catalogs', limit: 1 });
    t.same(await sdk.count({ collection: 'catalogs' }), { totalDocs: all.totalDocs }, 'as the list counts');
  });

  t.test('select', async (t) => {
    const page = await sdk.find({
      collection: 'catalogs',
      where: { slug: { like: 'sdk-' } },
      select: { title: true, slug: true },
      sort: 'id',
    });
    t.equal(page.docs.length, 10);
    for (const doc of page.docs)
      t.same(Object.keys(doc).sort(), ['id', 'slug', 'title'], 'the id and the fields asked');
    const first = page.docs[0] as { id: number };
    const one = await sdk.findByID({
      collection: 'catalogs',
      id: first.id,
      select: { isPublic: false, description: false },
    });
    t.notOk('isPublic' in one || 'description' in one, 'false leaves fields out');
    t.ok('slug' in one && 'createdAt' in one, 'and keeps the rest');
    t.match(
      await refusal(sdk.find({ collection: 'catalogs', select: { password: true } })),
      { status: 400, message: /unknown field "password"/ },
      'an unknown field is a 400',
    );
    t.match(
      await refusal(sdk.find({ collection: 'catalogs', select: { title: true, slug: false } })),
      { status: 400, message: /all true or all false/ },
      'true and false mixed is a 400',
    );
  });

  t.test('pagination=false: every matching document, up to the cap', async (t) => {
    const all = await sdk.find({
      collection: 'catalogs',
      where: { slug: { like: 'sdk-' } },
      pagination: false,
    });
    t.equal(all.docs.length, 12, 'more than the default page of 10, in one answer');
    t.equal(all.totalDocs, 12);
    t.equal(all.hasNextPage, false);
    t.equal(all.totalPages, 1);
    await insertLargeEvents(db.pool, 1001, 4);
    t.match(
      await refusal(
        sdk.find({ collection: 'events', pagination: false, where: { uniqueId: { like: 'large-' } } }),
      ),
      { status: 400, message: /at most 1000 documents and this query matches 1001/ },
      'more than the cap: refused, never cut short',
    );
    const narrowed = await sdk.find({
      collection: 'events',
      pagination: false,
      where: { uniqueId: { in: ['large-1', 'large-2'] } },
    });
    t.equal(narrowed.docs.length, 2, 'a narrower where fits');
  });

  t.test('_payload: an upload as the SDK sends it', async (t) => {
    const file = new File([CSV], 'sdk.csv', { type: 'text/csv' });
    const doc = (await sdk.create({
      collection: 'ingest-files',
      data: { catalog: catalogId, settings: { geocoding: false } },
      file,
    })) as { id: number; originalName?: string };
    t.ok(doc.id > 0, 'created');
    const Files = row(Type.Object({ n: Type.Number() }));
    t.equal(
      await db.pool.oneFirst(
        sql.type(
          Files,
        )`select count(*)::int as n from ingest_files where id = ${doc.id} and catalog_id = ${catalogId}`,
      ),
      1,
      'in the catalog named in _payload',
    );
    const both = multipart(
      { catalog: String(catalogId), _payload: JSON.stringify({ catalog: catalogId }) },
      { name: 'a.csv', content: CSV },
    );
    const conflict = await app.inject({
      method: 'POST',
      url: '/api/ingest-files',
      payload: both.payload,
      headers: { ...both.headers, authorization: `Bearer ${user.token}` },
    });
    t.equal(conflict.statusCode, 400, 'a field given both ways');
    t.match(conflict.json(), { message: /catalog is given both as a form field and in _payload/ });
    for (const bad of ['[1]', '{"nope":1}', '{not json']) {
      const body = multipart({ _payload: bad }, { name: 'a.csv', content: CSV });
      const response = await app.inject({
        method: 'POST',
        url: '/api/ingest-files',
        payload: body.payload,
        headers: { ...body.headers, authorization: `Bearer ${user.token}` },
      });
      t.equal(response.statusCode, 400, `_payload ${bad}`);
    }
  });
});
