import t from 'tap';
import { formatLsn, parseLsn } from '../../../../src/adapters/postgres/wal-position.ts';
import {
  chooseReplica,
  type ReplicaState,
  replicaCheck,
  replicaLagSeconds,
} from '../../../../src/domain/read/replica-choice.ts';

const lsn = (text: string) => parseLsn(text) as bigint;

t.test('LSNs parse from and print as PostgreSQL writes them', async (t) => {
  t.equal(parseLsn('0/16B3748'), 0x16b3748n);
  t.equal(parseLsn('16/B374D848'), (0x16n << 32n) + 0xb374d848n);
  t.equal(formatLsn(lsn('16/B374D848')), '16/B374D848');
  for (const bad of ['', '16', '16/', 'x/1', '1/2/3', '123456789/0', '0/1; drop table'])
    t.equal(parseLsn(bad), null, `"${bad}" is not an LSN`);
});

const standby = (
  name: string,
  replayed: string | null,
  lagSeconds: number | null = 0,
  reachable = true,
): ReplicaState => ({
  name,
  reachable,
  replayed: replayed === null ? null : lsn(replayed),
  lagSeconds,
});

t.test('a standby is ok within the lag bound in time, lagging past it, down when unreachable', async (t) => {
  const primary = lsn('1/0');
  t.same(replicaCheck(standby('a', '0/FF000000', 2), primary, 5), {
    status: 'ok',
    name: 'a',
    lagSeconds: 2,
    lagBytes: 16 * 1024 * 1024,
  });
  t.same(
    replicaCheck(standby('a', '0/FFFF0000', 7.25), primary, 5),
    { status: 'lagging', name: 'a', lagSeconds: 7.25, lagBytes: 65536 },
    'a few bytes behind but seconds old: lagging (the bound is in time, not bytes)',
  );
  t.equal(
    replicaCheck(standby('a', '0/10000000', 0.5), primary, 5).status,
    'ok',
    'far behind in bytes but recent: ok (a standby catching up after a big import keeps its reads)',
  );
  t.same(
    replicaCheck(standby('a', '0/FF000000', null), primary, 5),
    { status: 'lagging', name: 'a', lagBytes: 16 * 1024 * 1024 },
    'a lag not known is not within the bound',
  );
  t.same(replicaCheck(standby('a', '0/FF000000', 0, false), primary, 5), { status: 'down', name: 'a' });
  t.same(replicaCheck(standby('a', null), primary, 5), { status: 'down', name: 'a' });
  t.equal(
    replicaCheck(standby('a', '1/10'), primary, 0).lagBytes,
    0,
    'ahead of an older primary probe: no lag',
  );
  t.equal(replicaCheck(standby('a', '1/10', 0.0004), primary, 5).lagSeconds, 0, 'rounded to the millisecond');
});

t.test("how old a standby's data may be: the smaller of two upper bounds", async (t) => {
  // The primary was seen at 0/100 until t=1000 ms, at 0/200 at t=1500, at 0/300 at t=2000.
  const history = [
    { position: lsn('0/100'), seenAt: 1000 },
    { position: lsn('0/200'), seenAt: 1500 },
    { position: lsn('0/300'), seenAt: 2000 },
  ];
  t.equal(
    replicaLagSeconds(lsn('0/300'), history, 2010, 3600),
    0,
    'caught up: 0, however old the last commit',
  );
  t.equal(replicaLagSeconds(lsn('0/400'), history, 2010, null), 0, 'ahead of the last probe: 0');
  t.equal(
    replicaLagSeconds(lsn('0/250'), history, 2100, 3600),
    0.6,
    'it holds what the primary held at t=1500: at most 0.6 s old at t=2100 (not the hour since the last commit)',
  );
  t.equal(
    replicaLagSeconds(lsn('0/250'), history, 2100, 0.05),
    0.05,
    'a recent replayed commit bounds it tighter',
  );
  t.equal(
    replicaLagSeconds(lsn('0/50'), history, 2100, 42),
    42,
    'older than the whole history (a process just started): the last replayed commit',
  );
  t.equal(replicaLagSeconds(lsn('0/50'), history, 2100, null), null, 'neither known: not known');
  t.equal(replicaLagSeconds(lsn('0/50'), [], 2100, null), null);
  const page = lsn('0/4002000'); // a WAL page (8 kB) inside a segment
  const segment = lsn('0/4000000'); // the first page of a segment (16 MB)
  t.equal(
    replicaLagSeconds(page, [{ position: page + 24n, seenAt: 1000 }], 5000, 60),
    0,
    "an insert position just past a WAL page's header is the page boundary the standby replayed to",
  );
  t.equal(
    replicaLagSeconds(segment, [{ position: segment + 40n, seenAt: 1000 }], 5000, 60),
    0,
    "a segment's longer header too",
  );
  t.equal(
    replicaLagSeconds(page + 8n, [{ position: page + 40n, seenAt: 1000 }], 5000, 60),
    60,
    '40 bytes into a page that does not start a segment is a record, not a header',
  );
});

t.test("reads go to a standby that has replayed the caller's write, else the primary", async (t) => {
  const primary = lsn('0/5000');
  const states = [standby('a', '0/4000', 1), standby('b', '0/5000', 0)];
  const options = { maxLagSeconds: 5, mustHave: null, turn: 0 };
  t.equal(chooseReplica(states, primary, options), 'a', 'no write of the caller: any standby in turn');
  t.equal(chooseReplica(states, primary, { ...options, turn: 1 }), 'b');
  t.equal(
    chooseReplica(states, primary, { ...options, mustHave: lsn('0/4800') }),
    'b',
    'only b has replayed it',
  );
  t.equal(
    chooseReplica(states, primary, { ...options, mustHave: lsn('0/6000') }),
    null,
    'none has: the primary',
  );
  t.equal(
    chooseReplica([standby('a', '0/5000', 0, false)], primary, options),
    null,
    'a down standby is skipped',
  );
  t.equal(chooseReplica(states, primary, { ...options, maxLagSeconds: 0.5 }), 'b', 'the lag bound applies');
  t.equal(
    chooseReplica([standby('a', '0/5000', null)], primary, options),
    null,
    'a lag not known: the primary',
  );
  t.equal(chooseReplica([], primary, options), null, 'no standby: the primary');
});
