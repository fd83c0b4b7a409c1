import t from 'tap';
import { ValidationError } from '../../../../src/domain/errors.ts';
import {
  parseSubscriptionChanges,
  parseSubscriptionFields,
  retryDelayMs,
} from '../../../../src/domain/subscriptions/subscriptions.ts';

// The subscription rules that need no database: the retry schedule and the parsing of bodies.

t.test('retries back off exponentially with jitter, capped at an hour', async (t) => {
  t.equal(retryDelayMs(1, 0), 2_500, 'the first wait: half of 5 s at the least');
  t.equal(retryDelayMs(1, 1), 5_000, 'and 5 s at the most');
  t.equal(retryDelayMs(4, 1), 40_000, 'doubling');
  t.ok(retryDelayMs(4, 0.3) > retryDelayMs(4, 0.2), 'jitter spreads receivers that failed together');
  t.equal(retryDelayMs(30, 1), 3_600_000, 'capped');
});

t.test('bodies', async (t) => {
  const fields = parseSubscriptionFields(
    {
      name: ' City ',
      url: 'https://hooks.example.org/x',
      filter: { catalog: 'city', datasets: ['a', 'a'], bounds: { north: 2, south: 1, east: 2, west: 1 } },
    },
    null,
  );
  t.match(fields, {
    name: 'City',
    channel: { kind: 'webhook', url: 'https://hooks.example.org/x' },
    filter: { catalog: 'city', datasets: ['a'], bounds: { north: 2, south: 1, east: 2, west: 1 } },
  });
  t.match(parseSubscriptionFields({ name: 'e', channel: 'email', emailAddressId: 'addr_1' }, null), {
    channel: { kind: 'email', emailAddressId: 'addr_1' },
  });
  for (const body of [
    { name: 'x', url: 'https://u:p@example.org/' },
    { name: 'x', url: 'file:///etc/passwd' },
    { name: 'x', channel: 'sms' },
    { name: 'x', channel: 'email' },
    { name: 'x', url: 'https://a.example/', filter: { where: 1 } },
    { name: 'x', url: 'https://a.example/', filter: { startDate: '2026-02-01', endDate: '2026-01-01' } },
  ])
    t.throws(() => parseSubscriptionFields(body, null), ValidationError, JSON.stringify(body));
  t.same(parseSubscriptionChanges({ enabled: true }), { enabled: true });
  t.throws(() => parseSubscriptionChanges({ enabled: 'yes' }), ValidationError);
});
