import t from 'tap';
import { composeServices } from '../../../src/compose.ts';
import { signIn } from '../../fixtures/ingest/client.ts';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testConfig } from '../../helpers/app.ts';
import { scalar, startSeededPair } from '../../helpers/replication.ts';

// Read replicas with a real primary and a real hot standby (docs/scaling.md, "Read replicas"):
// /api/v1 reads land on the standby and answer what the primary answers; a caller's write is seen
// by their next read; a standby that stops mid-load costs no failed request and is used again once
// it is back.

const { pair, primaryUrl } = await startSeededPair(t);

const services = await composeServices(
  testConfig({
    databaseReadUrls: [pair.standby.url('chronomap')],
    // Time bounds are replica-time-bounds.test.ts's; on a loaded test machine a 1-s probe bound
    // would take the standby out now and then, and reads here must land on it.
    replicaTimeoutMs: 5000,
    quotasFile: policyFile(t, unlimitedAnonymousReads), // the load below is not the rate limit's test
  }),
  primaryUrl,
  { http: true, workers: false },
);
t.teardown(() => services.close());
const app = services.http!;

const readsOn = async (target: string) =>
  (await services.metrics.readTarget.get()).values.find((value) => value.labels.target === target)?.value ??
  0;
const ON_PRIMARY = { 'x-chronomap-min-lsn': 'FFFFFFFF/FFFFFFFF' }; // no standby has replayed this far

t.test('reads land on the standby and answer exactly what the primary answers', async (t) => {
  const urls = [
    '/api/v1/events?limit=50&sort=-eventTimestamp',
    '/api/v1/events/geo?zoom=3&bounds=' +
      encodeURIComponent(JSON.stringify({ north: 85, south: -85, east: 180, west: -180 })),
    '/api/v1/events/temporal?granularity=month',
    '/api/v1/data-sources',
  ];
  for (const url of urls) {
    const before = { replica: await readsOn('replica-1'), primary: await readsOn('primary') };
    const fromStandby = await app.inject({ method: 'GET', url });
    const fromPrimary = await app.inject({ method: 'GET', url, headers: ON_PRIMARY });
    t.equal(fromStandby.statusCode, 200, `${url}: ${fromStandby.body.slice(0, 300)}`);
    t.same(fromStandby.json(), fromPrimary.json(), `${url}: the same answer from both servers`);
    t.ok((await readsOn('replica-1')) > before.replica, `${url} was read on the standby`);
    t.ok((await readsOn('primary')) > before.primary, `${url} with a newer position was read on the primary`);
  }
  const health = (await app.inject({ method: 'GET', url: '/api/health' })).json();
  t.match(health.replicas, [{ name: 'replica-1', status: 'ok', lagSeconds: Number, lagBytes: Number }]);
});

t.test("a caller's write is seen by their next read, even while the standby lags", async (t) => {
  await scalar(pair.standby.url('chronomap'), 'select pg_wal_replay_pause()');
  t.teardown(() => scalar(pair.standby.url('chronomap'), 'select pg_wal_replay_resume()'));
  const user = await signIn(app, services.pool);
  const created = await app.inject({
    method: 'POST',
    url: '/api/catalogs',
    headers: { authorization: `JWT ${user.token}` },
    payload: { slug: 'written-just-now', title: 'Written just now', isPublic: true },
  });
  t.equal(created.statusCode, 201, created.body);
  // A catalog is listed with its datasets: give it one (the write whose position we follow).
  const written = await app.inject({
    method: 'POST',
    url: '/api/datasets',
    headers: { authorization: `JWT ${user.token}` },
    payload: { catalog: created.json().doc.id, slug: 'written', title: 'Written', isPublic: true },
  });
  t.equal(written.statusCode, 201, written.body);
  const position = written.headers['x-chronomap-lsn'];
  t.match(position, /^[0-9A-F]+\/[0-9A-F]+$/, 'the write answers with the primary position');
  const cookie = String(written.headers['set-cookie']).match(/chronomap-lsn=[^;]+/)?.[0];
  t.ok(cookie, 'and a cookie for browsers');

  const slugs = (response: {
    statusCode: number;
    body: string;
    json(): { catalogs: { slug: string }[] };
  }) => {
    t.equal(response.statusCode, 200, response.body.slice(0, 300));
    return response.json().catalogs.map((catalog) => catalog.slug);
  };
  const withCookie = await app.inject({
    method: 'GET',
    url: '/api/v1/data-sources',
    headers: { cookie: cookie ?? '' },
  });
  t.ok(slugs(withCookie).includes('written-just-now'), 'the writer (cookie) sees the write');
  const withHeader = await app.inject({
    method: 'GET',
    url: '/api/v1/data-sources',
    headers: { 'x-chronomap-min-lsn': String(position) },
  });
  t.ok(slugs(withHeader).includes('written-just-now'), 'an API client echoing the header sees it too');
  const anyone = await app.inject({ method: 'GET', url: '/api/v1/data-sources' });
  t.notOk(
    slugs(anyone).includes('written-just-now'),
    'others may read the paused standby, which has not yet',
  );
  const hostile = await app.inject({
    method: 'GET',
    url: '/api/v1/data-sources',
    headers: { 'x-chronomap-min-lsn': "0/0'; select 1 --", cookie: 'chronomap-lsn=zz' },
  });
  t.equal(hostile.statusCode, 200, 'a malformed position is ignored');
});

t.test("the position a write answers with lies at or after the write's own commit record", async (t) => {
  // The cluster commits with synchronous_commit off, as the test clusters do: a commit returns
  // before its WAL is written, so a position read from where the WAL is written (not inserted) can
  // lie before it, and the writer's next read would go to a standby without the write (seen on a
  // busy CI machine). pg_walinspect finds the commit record of the transaction that wrote the row.
  await scalar(primaryUrl, 'create extension if not exists pg_walinspect');
  const start = await scalar(primaryUrl, 'select pg_current_wal_flush_lsn()::text');
  const user = await signIn(app, services.pool);
  const created = await app.inject({
    method: 'POST',
    url: '/api/catalogs',
    headers: { authorization: `JWT ${user.token}` },
    payload: { slug: 'commit-position', title: 'Commit position', isPublic: true },
  });
  t.equal(created.statusCode, 201, created.body);
  const answered = String(created.headers['x-chronomap-lsn']);
  const writer = await scalar(primaryUrl, "select xmin::text from catalogs where slug = 'commit-position'");
  // pg_walinspect reads only flushed WAL: a switch to the next WAL file flushes everything before it.
  await scalar(primaryUrl, 'select pg_switch_wal()');
  const commitEnd = await scalar(
    primaryUrl,
    `select max(end_lsn)::text from pg_get_wal_records_info_till_end_of_wal('${start}')
     where record_type = 'COMMIT' and xid::text = '${writer}'`,
  );
  t.match(commitEnd, /^[0-9A-F]+\/[0-9A-F]+$/, 'the commit record is found');
  t.equal(
    await scalar(primaryUrl, `select '${answered}'::pg_lsn >= '${commitEnd}'::pg_lsn`),
    'true',
    `answered ${answered}, commit ends at ${commitEnd}`,
  );
});

t.test('the standby stopped mid-load: no failed request; restarted: used again', async (t) => {
  await pair.caughtUp('chronomap');
  let stop = false;
  const statuses: number[] = [];
  const load = Array.from({ length: 8 }, async () => {
    while (!stop) {
      const response = await app.inject({ method: 'GET', url: '/api/v1/events?limit=20&page=2' });
      statuses.push(response.statusCode);
    }
  });
  await new Promise((resolve) => setTimeout(resolve, 500));
  await pair.standby.stop();
  await new Promise((resolve) => setTimeout(resolve, 1500));
  stop = true;
  await Promise.all(load);
  t.ok(statuses.length > 20, `${statuses.length} requests during the switch`);
  t.same(
    statuses.filter((status) => status !== 200),
    [],
    'every request answered 200 while the standby went away',
  );
  const down = (await app.inject({ method: 'GET', url: '/api/health' })).json();
  t.equal(down.replicas[0].status, 'down', '/api/health reports it');
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/health' })).statusCode,
    200,
    'a warning, not critical',
  );

  await pair.restartStandby();
  await pair.caughtUp('chronomap');
  let back = false;
  for (let attempt = 0; attempt < 40 && !back; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    back = (await app.inject({ method: 'GET', url: '/api/health' })).json().replicas[0].status === 'ok';
  }
  t.ok(back, 'the probe finds it again');
  const before = await readsOn('replica-1');
  await app.inject({ method: 'GET', url: '/api/v1/events?limit=5' });
  t.ok((await readsOn('replica-1')) > before, 'and reads go to it again');
});
