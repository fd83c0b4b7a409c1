import pg from 'pg';
import t from 'tap';
import { composeServices } from '../../../src/compose.ts';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testConfig } from '../../helpers/app.ts';
import { freezeCluster } from '../../helpers/frozen-cluster.ts';
import { scalar, startSeededPair } from '../../helpers/replication.ts';

// Read replicas that tell the truth (issue 31 §1 and §2, docs/scaling.md, "Read replicas"), with a
// real primary and a real hot standby: a standby frozen by SIGSTOP (what a network black hole looks
// like: connections accepted, nothing answered) costs no failed read and is reported down; a
// standby whose replay is paused while the primary commits stops taking reads once its data is
// older than the bound in time; a caught-up standby of an idle primary has no lag at all.

const { pair, primaryUrl } = await startSeededPair(t);
await scalar(primaryUrl, 'create table lag_marks (n serial primary key, at timestamptz default now())');
await pair.caughtUp('chronomap');

const services = await composeServices(
  testConfig({
    databaseReadUrls: [pair.standby.url('chronomap')],
    replicaMaxLagSeconds: 1,
    replicaTimeoutMs: 1000,
    quotasFile: policyFile(t, unlimitedAnonymousReads),
  }),
  primaryUrl,
  { http: true, workers: false },
);
t.teardown(() => services.close());
const app = services.http!;

type Replica = { status: string; name: string; lagSeconds?: number; lagBytes?: number };
const replica = async (): Promise<Replica> =>
  (await app.inject({ method: 'GET', url: '/api/health' })).json().replicas[0];
/** Polls /api/health (every 100 ms, at most 30 s) until the standby's report satisfies `wanted`. */
const healthUntil = async (wanted: (found: Replica) => boolean): Promise<Replica> => {
  let found = await replica();
  for (let attempt = 0; attempt < 300 && !wanted(found); attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    found = await replica();
  }
  return found;
};
const readsOn = async (target: string) =>
  (await services.metrics.readTarget.get()).values.find((value) => value.labels.target === target)?.value ??
  0;
const lagGauge = async () =>
  (await services.metrics.registry.getSingleMetric('chronomap_replica_lag_seconds')?.get())?.values.find(
    (value) => value.labels.replica === 'replica-1',
  )?.value;
const anonymousRead = (page = 1) =>
  app.inject({ method: 'GET', url: `/api/v1/events?limit=20&page=${page}&sort=-eventTimestamp` });
/**
 * Whether anonymous reads go to the standby: reads (at most 50) until one does. A loaded machine
 * may make a probe round miss its bound now and then, which takes the standby out for a round.
 */
const readsReachStandby = async () => {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const before = await readsOn('replica-1');
    await anonymousRead();
    if ((await readsOn('replica-1')) > before) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
};

t.test('an idle primary with a caught-up standby: lag 0, ok', async (t) => {
  await pair.caughtUp('chronomap');
  // Nothing is written from here on: the last commit the standby replayed grows older than the
  // bound (1 s), yet the standby has everything the primary has.
  const standbyUrl = pair.standby.url('chronomap');
  const lastCommitAge = `select extract(epoch from now() - pg_last_xact_replay_timestamp()) > 1.5`;
  let old = await scalar(standbyUrl, lastCommitAge);
  for (let attempt = 0; attempt < 100 && old !== 'true'; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    old = await scalar(standbyUrl, lastCommitAge);
  }
  t.equal(old, 'true', 'the last commit the standby replayed is older than the bound');
  const found = await healthUntil((check) => check.status === 'ok' && check.lagSeconds === 0);
  t.match(
    found,
    { status: 'ok', name: 'replica-1', lagSeconds: 0 },
    'no lag, whatever the last commit’s age',
  );
  t.equal(await lagGauge(), 0, 'chronomap_replica_lag_seconds{replica="replica-1"} 0');
  t.equal((await anonymousRead()).statusCode, 200);
  t.ok(await readsReachStandby(), 'reads go to it');
});

t.test(
  'replay paused while the primary commits: past the bound in time, reads go to the primary',
  async (t) => {
    await pair.caughtUp('chronomap');
    const standbyUrl = pair.standby.url('chronomap');
    // Paused while nothing is written, so it cannot be behind on the writes below before the
    // pause holds (replay stops at the next record it receives).
    await scalar(standbyUrl, 'select pg_wal_replay_pause()');
    let resumed = false;
    const resume = async () => {
      if (resumed) return;
      resumed = true;
      await scalar(standbyUrl, 'select pg_wal_replay_resume()');
    };
    t.teardown(resume);
    const writer = new pg.Client({ connectionString: primaryUrl });
    await writer.connect();
    let writing = true;
    const writes = (async () => {
      while (writing) {
        await writer.query('insert into lag_marks default values');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    t.teardown(async () => {
      writing = false;
      await writes;
      await writer.end();
    });

    let state = await scalar(standbyUrl, 'select pg_get_wal_replay_pause_state()');
    for (let attempt = 0; attempt < 100 && state !== 'paused'; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      state = await scalar(standbyUrl, 'select pg_get_wal_replay_pause_state()');
    }
    t.equal(state, 'paused', 'replay stopped');
    // From here its lag only grows. Five times the bound: beyond what a probe round on a loaded
    // machine can report for a standby that is merely a round behind.
    const lagging = await healthUntil((check) => check.status === 'lagging' && (check.lagSeconds ?? 0) > 5);
    t.match(lagging, { status: 'lagging', name: 'replica-1', lagSeconds: Number }, 'health says lagging');
    t.ok(
      (lagging.lagSeconds ?? 0) > 1,
      `with its lag in seconds, past the 1-s bound (${lagging.lagSeconds})`,
    );
    t.ok(((await lagGauge()) ?? 0) > 1, 'and so does the gauge');
    const before = { primary: await readsOn('primary'), replica: await readsOn('replica-1') };
    for (let page = 1; page <= 5; page += 1) t.equal((await anonymousRead(page)).statusCode, 200);
    t.equal(await readsOn('replica-1'), before.replica, 'no anonymous read went to the stale standby');
    t.ok((await readsOn('primary')) >= before.primary + 5, 'they all went to the primary');

    writing = false;
    await writes;
    await resume();
    await pair.caughtUp('chronomap');
    const back = await healthUntil((check) => check.status === 'ok');
    t.equal(back.status, 'ok', 'replay resumed: ok again');
    t.ok(await readsReachStandby(), 'and reads go to it again');
  },
);

t.test(
  'a standby that stops answering (SIGSTOP): reads keep answering from the primary, health says down',
  async (t) => {
    await pair.caughtUp('chronomap');
    t.equal((await healthUntil((check) => check.status === 'ok')).status, 'ok', 'the standby is well before');
    // Some connections of the standby's read pools are open (and will hang, as over a black hole).
    for (let page = 1; page <= 4; page += 1) await anonymousRead(page);

    const frozen = freezeCluster(pair.standby.dataDir);
    t.teardown(() => frozen.thaw());
    const stopped = frozen.pids.length;
    t.ok(stopped > 3, `the postmaster and ${stopped - 1} processes of it stopped`);

    const before = await readsOn('primary');
    let load = true;
    const statuses: number[] = [];
    const readers = Array.from({ length: 4 }, async (_, reader) => {
      for (let n = 0; load; n += 1) {
        const response = await anonymousRead(1 + ((reader + n) % 5));
        statuses.push(response.statusCode);
      }
    });
    const down = await healthUntil((check) => check.status === 'down');
    t.same(down, { status: 'down', name: 'replica-1' }, '/api/health reports it down');
    // Reads answered after it was found down, and the ones that waited on it when it stopped.
    const answered = statuses.length;
    for (let wait = 0; wait < 1500 && statuses.length < answered + 20; wait += 1)
      await new Promise((resolve) => setTimeout(resolve, 20));
    load = false;
    await Promise.all(readers);
    t.same(
      statuses.filter((status) => status !== 200),
      [],
      `every read answered 200 (${statuses.length})`,
    );
    t.ok((await readsOn('primary')) >= before + 20, 'they were read on the primary');
    const health = await app.inject({ method: 'GET', url: '/api/health' });
    t.equal(health.statusCode, 200, 'a warning, not critical');

    frozen.thaw();
    const back = await healthUntil((check) => check.status === 'ok');
    t.equal(back.status, 'ok', 'SIGCONT: the probe finds it again');
    t.ok(await readsReachStandby(), 'and reads go to it again');
  },
);
