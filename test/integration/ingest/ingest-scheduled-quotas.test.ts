import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { policyFile } from '../../helpers/accounts.ts';
import { ingestApp, signIn, waitForFile } from '../../fixtures/ingest/client.ts';

// Scheduled imports take activeSchedules while they run by themselves, and each fetch takes one
// urlFetchesPerDay and one importJobsPerDay (once: the fetch used to be counted twice).

const CSV =
  'id,time,latitude,longitude,title\n1,2026-01-01T00:00:00Z,52.5,13.4,a\n2,2026-01-02T00:00:00Z,48.8,2.3,b\n';

t.test('activeSchedules follows enabling and disabling; a fetch counts once', async (t) => {
  const server = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/csv' }).end(CSV);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events.csv`;
  const quotasFile = policyFile(t); // level 1: activeSchedules 1, urlFetchesPerDay 5
  const { app, db } = await ingestApp(
    t,
    { fetch: { maxBytes: 1024 * 1024, timeoutMs: 5000, allowPrivateAddresses: true } },
    true,
    { quotasFile },
  );
  const user = await signIn(app, db.pool, { trustLevel: 1 });
  const auth = { authorization: `Bearer ${user.token}` };
  const catalog = (
    await app.inject({
      method: 'POST',
      url: '/api/catalogs',
      headers: auth,
      payload: { slug: 'mine', title: 'Mine' },
    })
  ).json().doc.id as number;
  const quotas = async () =>
    (await app.inject({ method: 'GET', url: '/api/quotas', headers: auth })).json().quotas;
  const create = (name: string) =>
    app.inject({
      method: 'POST',
      url: '/api/scheduled-ingests',
      headers: auth,
      payload: { name, url, schedule: '0 3 * * *', catalog },
    });

  const first = await create('First');
  t.equal(first.statusCode, 201, first.body);
  t.match((await quotas()).activeSchedules, { used: 1, limit: 1, remaining: 0 });
  const refused = await create('Second');
  t.equal(refused.statusCode, 403, refused.body);
  t.match(refused.json(), { code: 'QUOTA_EXCEEDED', message: /activeSchedules/ });
  t.match((await quotas()).activeSchedules, { used: 1 }, 'a refused schedule takes nothing');

  const firstId = first.json().doc.id as number;
  const patch = (id: number, payload: object) =>
    app.inject({ method: 'PATCH', url: `/api/scheduled-ingests/${id}`, headers: auth, payload });
  t.equal((await patch(firstId, { enabled: false })).statusCode, 200);
  t.match((await quotas()).activeSchedules, { used: 0 }, 'a disabled schedule gives its unit back');
  const second = await create('Second');
  t.equal(second.statusCode, 201, second.body);
  const again = await patch(firstId, { enabled: true });
  t.equal(again.statusCode, 403, again.body);
  t.match(again.json(), { code: 'QUOTA_EXCEEDED' });
  t.match((await quotas()).activeSchedules, { used: 1 });

  const secondId = second.json().doc.id as number;
  const triggered = await app.inject({
    method: 'POST',
    url: `/api/scheduled-ingests/${secondId}/trigger`,
    headers: auth,
  });
  t.ok([200, 202].includes(triggered.statusCode), triggered.body);
  const Runs = row(
    Type.Object({ status: Type.String(), ingest_file_id: Type.Union([Type.Number(), Type.Null()]) }),
  );
  let runs: readonly { status: string; ingest_file_id: number | null }[] = [];
  for (let i = 0; i < 300 && runs[0]?.status !== 'imported'; i++) {
    runs = await db.pool.any(sql.type(Runs)`select status, ingest_file_id from scheduled_ingest_runs`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.match(runs, [{ status: 'imported' }]);
  await waitForFile(app, runs[0]?.ingest_file_id as number);
  t.match(await quotas(), {
    urlFetchesPerDay: { used: 1 },
    importJobsPerDay: { used: 1 },
    fileUploadsPerDay: { used: 0 },
    totalEvents: { used: 2 },
  });
});
