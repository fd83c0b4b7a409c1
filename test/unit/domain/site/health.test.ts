import t from 'tap';
import {
  environmentCheck,
  type HealthReport,
  isHealthy,
  migrationsCheck,
} from '../../../../src/domain/site/health.ts';

const healthy: HealthReport = {
  database: { status: 'ok' },
  migrations: { status: 'ok' },
  postgis: { status: 'ok', version: '3.3.2' },
  environment: { status: 'ok' },
};

t.test('a report with every check ok is healthy', async (t) => {
  t.equal(isHealthy(healthy), true);
});

t.test('warnings keep the service healthy', async (t) => {
  t.equal(isHealthy({ ...healthy, migrations: { status: 'pending', pending: ['0002_x.sql'] } }), true);
  t.equal(isHealthy({ ...healthy, runner: { status: 'degraded', url: 'http://r', message: 'down' } }), true);
});

t.test('critical failures make it unhealthy', async (t) => {
  t.equal(isHealthy({ ...healthy, database: { status: 'error', message: 'refused' } }), false);
  t.equal(isHealthy({ ...healthy, migrations: { status: 'error' } }), false);
  t.equal(isHealthy({ ...healthy, postgis: { status: 'not found' } }), false);
  t.equal(isHealthy({ ...healthy, environment: { status: 'error', missing: ['SESSION_SECRET'] } }), false);
});

t.test('migrations and environment checks list what is missing', async (t) => {
  t.same(migrationsCheck([]), { status: 'ok' });
  t.same(migrationsCheck(['0002_a.sql']), { status: 'pending', pending: ['0002_a.sql'] });
  t.same(environmentCheck([]), { status: 'ok' });
  t.same(environmentCheck(['SCRAPER_API_KEY']), { status: 'error', missing: ['SCRAPER_API_KEY'] });
});
