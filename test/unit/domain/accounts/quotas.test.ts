import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { projectRoot } from '../../../../src/adapters/config/environment.ts';
import {
  decideQuotaTake,
  fitsQuota,
  mergeQuotaAmounts,
  nextDailyReset,
  parseAccessPolicy,
  periodStart,
  QuotaExceededError,
  quotaLimit,
  quotaReset,
} from '../../../../src/domain/accounts/quotas.ts';

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

t.test('the shipped quotas let a new account import a real first file (issue 28 §1)', async (t) => {
  const policy = parseAccessPolicy(raw());
  const sample = path.join(projectRoot, 'examples', 'usgs-earthquakes.csv');
  const rows = readFileSync(sample, 'utf8').trimEnd().split('\n').length - 1;
  const megabytes = statSync(sample).size / (1024 * 1024);
  t.equal(rows, 1943, 'the sample seed-demo loads');
  const newcomer = { role: 'user' as const, trustLevel: policy.defaultTrustLevel };
  for (const subject of [newcomer, { role: 'user' as const, trustLevel: 0 as const }]) {
    const label = `level ${subject.trustLevel}`;
    t.ok(
      (quotaLimit(policy, 'eventsPerImport', subject) ?? Infinity) >= rows,
      `${label}: the sample in one import`,
    );
    t.ok((quotaLimit(policy, 'totalEvents', subject) ?? Infinity) >= rows, `${label}: and kept`);
    t.ok((quotaLimit(policy, 'maxFileSizeMB', subject) ?? Infinity) >= megabytes, `${label}: its file size`);
  }
  // A public data set of tens of thousands of rows (50,000 rows of about 20 columns is ~10-20 MB).
  t.ok((quotaLimit(policy, 'eventsPerImport', newcomer) ?? Infinity) >= 50_000, 'tens of thousands of rows');
  t.ok((quotaLimit(policy, 'totalEvents', newcomer) ?? Infinity) >= 50_000);
  t.ok((quotaLimit(policy, 'maxFileSizeMB', newcomer) ?? Infinity) >= 20);
});

t.test('config/quotas.yaml holds the spec scraper numbers', async (t) => {
  const policy = parseAccessPolicy(raw());
  const user = (trustLevel: 0 | 1 | 2 | 3 | 4 | 5) => ({ role: 'user' as const, trustLevel });
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

t.test(
  'one decision: used + amount <= limit, all or nothing, unlimited for admins and level 5',
  async (t) => {
    const policy = parseAccessPolicy(raw());
    const now = new Date('2030-06-01T12:00:00Z');
    const level1 = { role: 'user' as const, trustLevel: 1 as const };
    t.ok(fitsQuota(4, 1, 5), 'the last unit fits');
    t.notOk(fitsQuota(5, 1, 5), 'one past the limit does not');
    t.ok(fitsQuota(1e9, 1e9, null), 'null is unlimited');

    const used = new Map([
      ['fileUploadsPerDay', 2],
      ['importJobsPerDay', 10],
    ] as const);
    const refusal = decideQuotaTake(
      policy,
      level1,
      [
        { quota: 'fileUploadsPerDay', amount: 1 },
        { quota: 'importJobsPerDay', amount: 1 },
      ],
      used,
      now,
    );
    t.ok(refusal instanceof QuotaExceededError, 'one quota that does not fit refuses the whole request');
    t.match(refusal, { quota: 'importJobsPerDay', limit: 10, used: 10, code: 'QUOTA_EXCEEDED' });
    t.same(refusal?.resetsAt, new Date('2030-06-02T00:00:00Z'), 'a daily quota names its reset');
    t.match(refusal?.message, /importJobsPerDay.*limited to 10.*resets at 2030-06-02T00:00:00\.000Z/);

    const perItem = decideQuotaTake(policy, level1, [{ quota: 'maxFileSizeMB', amount: 26 }], new Map(), now);
    t.match(
      perItem,
      { quota: 'maxFileSizeMB', limit: 25, resetsAt: null },
      'a ceiling compares the amount itself',
    );
    t.equal(decideQuotaTake(policy, level1, [{ quota: 'maxFileSizeMB', amount: 25 }], new Map(), now), null);

    for (const subject of [
      { role: 'admin' as const, trustLevel: 0 as const },
      { role: 'user' as const, trustLevel: 5 as const },
    ]) {
      t.equal(
        decideQuotaTake(
          policy,
          subject,
          [{ quota: 'totalEvents', amount: 1e9 }],
          new Map([['totalEvents', 1e9]]),
          now,
        ),
        null,
        `${subject.role} at level ${subject.trustLevel} is unlimited`,
      );
    }
    t.same(
      mergeQuotaAmounts([
        { quota: 'totalEvents', amount: 2 },
        { quota: 'fileUploadsPerDay', amount: 1 },
        { quota: 'totalEvents', amount: 3 },
      ]),
      [
        { quota: 'fileUploadsPerDay', amount: 1 },
        { quota: 'totalEvents', amount: 5 },
      ],
      'one amount per quota, in name order',
    );
    t.same(quotaReset('total', now), null);
    t.same(quotaReset('daily', now), new Date('2030-06-02T00:00:00Z'));
  },
);
