import t from 'tap';
import { ConfigError, loadConfig } from '../../../../src/adapters/config/environment.ts';
import { DEFAULT_OUTBOXES } from '../../../../src/adapters/config/outbox-config.ts';

t.test('outbox timing: documented defaults, overridable, hostile values named at start-up', async (t) => {
  t.same(loadConfig({ NODE_ENV: 'test' }).outboxes, DEFAULT_OUTBOXES);
  t.same(
    loadConfig({
      NODE_ENV: 'test',
      WEBHOOK_RETRY_BASE_MS: '1000',
      WEBHOOK_LEASE_MS: '120000',
      EMAIL_RETRY_BASE_MS: '60000',
      EMAIL_LEASE_MS: '600000',
    }).outboxes,
    {
      deliveries: { retryBaseMs: 1000, leaseMs: 120000 },
      email: { retryBaseMs: 60000, leaseMs: 600000 },
    },
  );
  const hostile: Array<[string, string]> = [
    ['WEBHOOK_RETRY_BASE_MS', '0'],
    ['WEBHOOK_RETRY_BASE_MS', '-5000'],
    ['WEBHOOK_RETRY_BASE_MS', '1e3'],
    ['WEBHOOK_LEASE_MS', '5000'],
    ['WEBHOOK_LEASE_MS', '99999999999999999999'],
    ['WEBHOOK_LEASE_MS', 'Infinity'],
    ['EMAIL_RETRY_BASE_MS', 'NaN'],
    ['EMAIL_RETRY_BASE_MS', ' 30000'],
    ['EMAIL_LEASE_MS', '60000'],
    ['EMAIL_LEASE_MS', '0x1000'],
    ['EMAIL_LEASE_MS', '3600001'],
  ];
  for (const [variable, value] of hostile) {
    t.throws(() => loadConfig({ NODE_ENV: 'test', [variable]: value }), ConfigError, `${variable}=${value}`);
    t.throws(() => loadConfig({ NODE_ENV: 'test', [variable]: value }), {
      message: new RegExp(`${variable}: must be a number of milliseconds`),
    });
  }
});
