import t from 'tap';
import { embeddedServerSettings } from '../../../src/adapters/postgres/embedded-cluster.ts';

const GB = 1024 ** 3;

t.test('shared buffers: a quarter of the memory, between 128 MB and 2 GB', async (t) => {
  t.equal(embeddedServerSettings(4 * GB).shared_buffers, '1024MB');
  t.equal(embeddedServerSettings(64 * GB).shared_buffers, '2048MB', 'capped: the service shares the machine');
  t.equal(embeddedServerSettings(0.25 * GB).shared_buffers, '128MB', "never below PostgreSQL's default");
});

t.test('room for a large import between checkpoints; development durability', async (t) => {
  t.match(embeddedServerSettings(8 * GB), {
    max_wal_size: '8GB',
    checkpoint_timeout: '30min',
    wal_compression: 'on',
    fsync: 'off',
    synchronous_commit: 'off',
    max_connections: '200',
  });
});
