import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { projectRoot } from '../../../src/adapters/config/environment.ts';
import { nextDailyReset, parseAccessPolicy, periodStart, quotaLimit } from '../../../src/domain/quotas.ts';

type QuotaEntry = { levels: Record<number, unknown>; period: unknown };
type RawConfig = {
  quotas: { totalEvents: QuotaEntry; extra?: QuotaEntry };
  rateLimits: { anonymous: Record<string, unknown> };
  defaultTrustLevel: unknown;
  tokenTtlSeconds: unknown;
  sessionMaxAgeSeconds: unknown;
  loginAttempts: Record<string, unknown>;
};

const raw = () => parse(readFileSync(path.join(projectRoot, 'config', 'quotas.yaml'), 'utf8')) as RawConfig;

t.test('config/quotas.yaml holds the spec scraper numbers', async (t) => {
  const policy = parseAccessPolicy(raw());
  const user = (trustLevel: 0 | 1 | 2 | 3 | 4 | 5) => ({ role: 'user', trustLevel });
  t.same(
    [0, 1, 2, 3, 4, 5].map((l) => quotaLimit(policy, 'scraperRepos', user(l as 0))),
    [0, 0, 0, 3, 10, null],
  );
  t.same(
    [0, 1, 2, 3, 4, 5].map((l) => quotaLimit(policy, 'scraperRunsPerDay', user(l as 0))),
    [0, 0, 0, 10, 50, null],
  );
  t.equal(
    quotaLimit(policy, 'fileUploadsPerDay', { role: 'admin', trustLevel: 0 }),
    null,
    'admins are unlimited',
  );
  t.equal(policy.rateLimits.byTrustLevel[5], null);
  t.equal(policy.defaultTrustLevel, 1);
  t.equal(policy.sessionMaxAgeSeconds, 7 * 24 * 3600, 'a login lives at most a week');
  t.same(
    policy.loginAttempts.perIpAndEmail.map((w) => w.limit),
    [10, 30, 100],
    'guessing from one address waits a minute, then an hour, then a day',
  );
});

t.test('a bad file names the offending key', async (t) => {
  const cases: [(r: RawConfig) => void, RegExp][] = [
    [
      (r) => delete (r.quotas as Partial<RawConfig['quotas']>).totalEvents,
      /quotas\.totalEvents must be a mapping/,
    ],
    [(r) => (r.quotas.totalEvents.levels[3] = -1), /quotas\.totalEvents\.levels\.3 must be a whole number/],
    [(r) => (r.quotas.totalEvents.period = 'weekly'), /period must be daily, total or perItem/],
    [(r) => (r.quotas.extra = r.quotas.totalEvents), /unknown quota extra/],
    [(r) => (r.defaultTrustLevel = 6), /defaultTrustLevel must be a trust level/],
    [(r) => (r.rateLimits.anonymous.minutely = { seconds: 60, limit: 1 }), /unknown window/],
    [(r) => (r.tokenTtlSeconds = 5), /tokenTtlSeconds must be at least 60/],
    [(r) => (r.sessionMaxAgeSeconds = 60), /sessionMaxAgeSeconds must be at least tokenTtlSeconds/],
    [(r) => (r.loginAttempts.perEmail = r.loginAttempts.perIp), /perEmail is no longer read/],
  ];
  for (const [change, message] of cases) {
    const config = raw();
    change(config);
    t.throws(() => parseAccessPolicy(config), { message }, String(message));
  }
});

t.test('periods', async (t) => {
  const late = new Date('2030-12-31T23:59:59.999Z');
  t.equal(periodStart('daily', late), '2030-12-31');
  t.equal(periodStart('total', late), '1970-01-01');
  t.same(nextDailyReset(late), new Date('2031-01-01T00:00:00.000Z'));
});
