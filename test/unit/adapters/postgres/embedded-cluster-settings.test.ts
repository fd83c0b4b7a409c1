import t from 'tap';
import {
  embeddedServerSettings,
  settingsThatDiffer,
} from '../../../../src/adapters/postgres/embedded-cluster.ts';

const GB = 1024 ** 3;

t.test('shared buffers: a quarter of the memory, between 128 MB and 2 GB', async (t) => {
  t.equal(embeddedServerSettings(4 * GB).shared_buffers, '1024MB');
  t.equal(embeddedServerSettings(64 * GB).shared_buffers, '2048MB', 'capped: the service shares the machine');
  t.equal(embeddedServerSettings(0.25 * GB).shared_buffers, '128MB', "never below PostgreSQL's default");
});

t.test('room for a large import between checkpoints', async (t) => {
  t.match(embeddedServerSettings(8 * GB), {
    max_wal_size: '8GB',
    checkpoint_timeout: '30min',
    wal_compression: 'pglz',
    max_connections: '200',
  });
});

t.test('durable clusters keep fsync and synchronous_commit on; disposable ones turn them off', async (t) => {
  t.equal(embeddedServerSettings(24 * GB).fsync, 'on', 'durable is the default');
  t.equal(embeddedServerSettings(24 * GB, 'disposable').fsync, 'off');
  t.equal(embeddedServerSettings(24 * GB).synchronous_commit, 'on', 'an acknowledged commit is on the disk');
  t.equal(
    embeddedServerSettings(24 * GB, 'disposable').synchronous_commit,
    'off',
    'test clusters may lose commits',
  );
});

t.test('settings compare in pg_settings units', async (t) => {
  const wanted = { shared_buffers: '2048MB', checkpoint_timeout: '30min', max_wal_size: '8GB', fsync: 'on' };
  const same = {
    shared_buffers: { setting: '262144', unit: '8kB' },
    checkpoint_timeout: { setting: '1800', unit: 's' },
    max_wal_size: { setting: '8192', unit: 'MB' },
    fsync: { setting: 'on', unit: null },
  };
  t.same(settingsThatDiffer(wanted, same), []);
  t.same(settingsThatDiffer(wanted, { ...same, fsync: { setting: 'off', unit: null } }), [
    'fsync=off (wanted on)',
  ]);
  t.same(settingsThatDiffer(wanted, { ...same, shared_buffers: { setting: '16384', unit: '8kB' } }), [
    'shared_buffers=16384×8kB (wanted 2048MB)',
  ]);
  t.same(settingsThatDiffer({ wal_compression: 'on' }, {}), ['wal_compression=unknown (wanted on)']);
});
