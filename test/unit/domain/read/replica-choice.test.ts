import t from 'tap';
import { formatLsn, parseLsn } from '../../../../src/adapters/postgres/wal-position.ts';
import {
  chooseReplica,
  type ReplicaState,
  replicaCheck,
} from '../../../../src/domain/read/replica-choice.ts';

const MB = 1024 * 1024;
const lsn = (text: string) => parseLsn(text) as bigint;

t.test('LSNs parse from and print as PostgreSQL writes them', async (t) => {
  t.equal(parseLsn('0/16B3748'), 0x16b3748n);
  t.equal(parseLsn('16/B374D848'), (0x16n << 32n) + 0xb374d848n);
  t.equal(formatLsn(lsn('16/B374D848')), '16/B374D848');
  for (const bad of ['', '16', '16/', 'x/1', '1/2/3', '123456789/0', '0/1; drop table'])
    t.equal(parseLsn(bad), null, `"${bad}" is not an LSN`);
});

const standby = (name: string, replayed: string | null, reachable = true): ReplicaState => ({
  name,
  reachable,
  replayed: replayed === null ? null : lsn(replayed),
});

t.test('a standby is ok within the lag bound, lagging past it, down when unreachable', async (t) => {
  const primary = lsn('1/0');
  t.same(replicaCheck(standby('a', '0/FF000000'), primary, 32 * MB), {
    status: 'ok',
    name: 'a',
    lagBytes: 16 * MB,
  });
  t.same(replicaCheck(standby('a', '0/F0000000'), primary, 32 * MB), {
    status: 'lagging',
    name: 'a',
    lagBytes: 256 * MB,
  });
  t.same(replicaCheck(standby('a', '0/FF000000', false), primary, 32 * MB), { status: 'down', name: 'a' });
  t.same(replicaCheck(standby('a', null), primary, 32 * MB), { status: 'down', name: 'a' });
  t.equal(
    replicaCheck(standby('a', '1/10'), primary, 0).lagBytes,
    0,
    'ahead of an older primary probe: no lag',
  );
});

t.test("reads go to a standby that has replayed the caller's write, else the primary", async (t) => {
  const primary = lsn('0/5000');
  const states = [standby('a', '0/4000'), standby('b', '0/5000')];
  const options = { maxLagBytes: 16 * MB, mustHave: null, turn: 0 };
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
    chooseReplica([standby('a', '0/5000', false)], primary, options),
    null,
    'a down standby is skipped',
  );
  t.equal(chooseReplica(states, primary, { ...options, maxLagBytes: 0 }), 'b', 'the lag bound applies');
  t.equal(chooseReplica([], primary, options), null, 'no standby: the primary');
});
