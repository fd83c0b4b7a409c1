import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { authHeaders, ingestApp, uploadCsv, waitForFile } from '../../fixtures/ingest/client.ts';

// Provenance per event (issue 38 §5) through the service: an upload's events name the file and its
// SHA-256 (of the bytes sent), their job, sheet and row; a URL import's name the URL with its
// secrets REDACTED, the fetch time and the server's ETag and Last-Modified; a dataset whose owner
// hides provenance says nothing beyond the dataset (the page answers 404).

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

type ListedEvent = { id: number; title: string; provenance: Record<string, unknown> };

async function eventsOf(app: Parameters<typeof authHeaders>[0], slug: string): Promise<ListedEvent[]> {
  const response = await app.inject({
    method: 'GET',
    url: `/api/v1/events?datasets=${slug}&sort=id`,
    headers: { ...authHeaders(app), 'cache-control': 'no-cache' },
  });
  if (response.statusCode !== 200) throw new Error(`${response.statusCode} ${response.body}`);
  return (response.json() as { events: ListedEvent[] }).events;
}

const Slug = row(Type.Object({ slug: Type.String() }));

t.test(
  'an upload: file name, SHA-256 of the file, job, sheet and row; the page; hidden by the owner',
  async (t) => {
    const { app, db, catalogId } = await ingestApp(t);
    const lines = [
      'id,time,latitude,longitude,title',
      'a,2026-01-01T00:00:00Z,52.5,13.4,First',
      'b,2026-01-02T00:00:00Z,48.8,2.3,Second',
    ];
    const { doc, jobId, datasetId } = await uploadCsv(app, catalogId, 'concerts.csv', lines);
    t.match(await waitForFile(app, doc.id), { status: 'completed' });
    const slug = (await db.pool.one(sql.type(Slug)`select slug from datasets where id = ${datasetId}`)).slug;

    const listed = await eventsOf(app, slug);
    t.equal(listed.length, 2);
    const second = listed.find((e) => e.title === 'Second') as ListedEvent;
    t.match(second.provenance, {
      shown: true,
      importJob: jobId,
      row: 2,
      storedAt: /^\d{4}-\d\d-\d\dT/,
      changedAt: /^\d{4}-\d\d-\d\dT/,
      page: `/events/${second.id}/provenance`,
    });
    t.notOk('source' in second.provenance, 'a list leaves the source to the one event');

    const one = await app.inject({
      method: 'GET',
      url: `/api/v1/events/${second.id}`,
      headers: authHeaders(app),
    });
    t.equal(one.statusCode, 200, one.body);
    t.match(one.json(), {
      event: {
        id: second.id,
        title: 'Second',
        provenance: {
          shown: true,
          importJob: jobId,
          row: 2,
          sheet: { index: 0, name: null },
          source: { kind: 'upload', fileName: 'concerts.csv', sha256: sha256(lines.join('\n')) },
        },
      },
    });

    // The page is public for a public dataset: anonymous, server-rendered, no scripts.
    const page = await app.inject({ method: 'GET', url: `/events/${second.id}/provenance` });
    t.equal(page.statusCode, 200);
    t.match(page.headers['content-type'], /text\/html/);
    t.match(page.body, sha256(lines.join('\n')));
    t.match(page.body, 'concerts.csv');
    t.notMatch(page.headers['content-security-policy'], /script-src/);

    // The owner hides it: the field says nothing beyond the dataset, the page does not exist.
    const hidden = await app.inject({
      method: 'PATCH',
      url: `/api/datasets/${datasetId}`,
      payload: { provenancePublic: false },
      headers: authHeaders(app),
    });
    t.equal(hidden.statusCode, 200, hidden.body);
    t.match(hidden.json(), { doc: { provenancePublic: false } });
    t.same(
      (await eventsOf(app, slug)).map((e) => e.provenance),
      [{ shown: false }, { shown: false }],
    );
    const reduced = await app.inject({
      method: 'GET',
      url: `/api/v1/events/${second.id}`,
      headers: authHeaders(app),
    });
    t.same(reduced.json().event.provenance, { shown: false });
    t.equal((await app.inject({ method: 'GET', url: `/events/${second.id}/provenance` })).statusCode, 404);
    t.equal(
      (await app.inject({ method: 'GET', url: `/events/${second.id}/provenance`, headers: authHeaders(app) }))
        .statusCode,
      404,
      'for the owner too',
    );

    // An event nobody may read, and one that does not exist, are the same 404.
    await db.pool.query(
      sql.unsafe`update datasets set is_public = false, provenance_public = true where id = ${datasetId}`,
    );
    t.equal((await app.inject({ method: 'GET', url: `/api/v1/events/${second.id}` })).statusCode, 404);
    t.equal((await app.inject({ method: 'GET', url: `/events/${second.id}/provenance` })).statusCode, 404);
    t.equal((await app.inject({ method: 'GET', url: '/api/v1/events/999999999' })).statusCode, 404);
    t.equal((await app.inject({ method: 'GET', url: '/api/v1/events/abc' })).statusCode, 400);
  },
);

async function feed(t: Test, csv: string) {
  const server = http.createServer((_request, response) => {
    response
      .writeHead(200, {
        'content-type': 'text/csv',
        etag: '"feed-v7"',
        'last-modified': 'Wed, 21 Oct 2026 07:28:00 GMT',
      })
      .end(csv);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  return (server.address() as AddressInfo).port;
}

const Run = row(
  Type.Object({ status: Type.String(), ingest_file_id: Type.Union([Type.Number(), Type.Null()]) }),
);

t.test(
  'a URL import: the URL with credentials and token REDACTED, fetch time, ETag, Last-Modified',
  async (t) => {
    const csv = 'id,time,latitude,longitude,title\n1,2026-01-01T00:00:00Z,52.5,13.4,Fetched\n';
    const port = await feed(t, csv);
    const { app, db, catalogId } = await ingestApp(t, {
      fetch: { maxBytes: 1024 * 1024, timeoutMs: 5000, allowPrivateAddresses: true },
    });
    const created = await app.inject({
      method: 'POST',
      url: '/api/scheduled-ingests',
      payload: {
        name: 'Feed',
        url: `http://127.0.0.1:${port}/events.csv?token=s3cret&page=2`,
        catalog: catalogId,
      },
      headers: authHeaders(app),
    });
    t.equal(created.statusCode, 201, created.body);
    const scheduleId = (created.json() as { doc: { id: number } }).doc.id;
    // The API refuses credentials in a new URL; one stored before that rule (or by hand) still has them.
    await db.pool.query(sql.unsafe`
    update scheduled_ingests set url = ${`http://reader:pa55word@127.0.0.1:${port}/events.csv?token=s3cret&page=2`}
    where id = ${scheduleId}`);
    const before = Date.now();
    const triggered = await app.inject({
      method: 'POST',
      url: `/api/scheduled-ingests/${scheduleId}/trigger`,
      headers: authHeaders(app),
    });
    t.equal(triggered.statusCode, 202, triggered.body);
    let fileId: number | null = null;
    for (let i = 0; i < 300 && fileId === null; i++) {
      const run = await db.pool.maybeOne(
        sql.type(Run)`select status, ingest_file_id from scheduled_ingest_runs`,
      );
      if (run?.status === 'failed') throw new Error('the fetch failed');
      if (run?.status === 'imported') fileId = run.ingest_file_id;
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
    t.match(await waitForFile(app, fileId as number), { status: 'completed' });
    const slug = (
      await db.pool.one(sql.type(Slug)`
      select d.slug from datasets d join ingest_jobs j on j.dataset_id = d.id where j.ingest_file_id = ${fileId}`)
    ).slug;
    const [event] = await eventsOf(app, slug);
    const one = await app.inject({
      method: 'GET',
      url: `/api/v1/events/${event?.id}`,
      headers: authHeaders(app),
    });
    const provenance = one.json().event.provenance;
    t.match(provenance, {
      shown: true,
      row: 1,
      source: {
        kind: 'url',
        trigger: 'scheduled',
        url: `http://REDACTED:REDACTED@127.0.0.1:${port}/events.csv?token=REDACTED&page=2`,
        etag: '"feed-v7"',
        lastModified: 'Wed, 21 Oct 2026 07:28:00 GMT',
        sha256: sha256(csv),
      },
    });
    const fetchedAt = Date.parse(provenance.source.fetchedAt);
    t.ok(fetchedAt >= before - 1000 && fetchedAt <= Date.now(), 'fetched during the run');
    t.notMatch(one.body, /s3cret|pa55word|reader/, 'no secret anywhere in the answer');
    const page = await app.inject({
      method: 'GET',
      url: `/events/${event?.id}/provenance`,
      headers: authHeaders(app),
    });
    t.equal(page.statusCode, 200);
    t.notMatch(page.body, /s3cret|pa55word/);
    t.match(page.body, '&quot;feed-v7&quot;');
  },
);
