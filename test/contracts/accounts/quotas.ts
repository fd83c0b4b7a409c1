import path from 'node:path';
import type { Test } from 'tap';
import { loadAccessPolicy } from '../../../src/adapters/config/access-policy.ts';
import { projectRoot } from '../../../src/adapters/config/environment.ts';
import {
  type AccessPolicy,
  nextDailyReset,
  type QuotaName,
  type QuotaSubject,
} from '../../../src/domain/accounts/quotas.ts';
import type { Quotas } from '../../../src/ports/accounts/quotas.ts';
import type { Clock } from '../../../src/ports/clock.ts';

// What every implementation of the Quotas port does, as one suite: run against the in-memory fake
// (test/unit/fakes/accounts/quotas.test.ts) and against postgresQuotas
// (test/integration/accounts/quotas-contract.test.ts), so a use-case test that uses the fake relies
// on nothing the service's own adapter does not do. The limits are read from config/quotas.yaml,
// not written here, so the suite follows the file.

export type QuotasUnderTest = {
  quotas: Quotas;
  /** A new account with this role and trust level: its id. */
  addUser(subject: QuotaSubject): Promise<number>;
  /** An id that no account has. */
  missingUserId: number;
};

/** A fresh Quotas on `policy` and `clock`; the accounts of one call are not another's. */
export type MakeQuotas = (policy: AccessPolicy, clock: Clock) => Promise<QuotasUnderTest>;

const BASIC: QuotaSubject = { role: 'user', trustLevel: 1 };

/** The refusal of `quota`, as t.rejects matches it. */
const refusal = (
  quota: QuotaName,
  facts: { limit?: number; used?: number; resetsAt?: Date | null } = {},
) => ({
  name: 'QuotaExceededError',
  code: 'QUOTA_EXCEEDED',
  quota,
  ...facts,
});
const NOON = new Date('2030-01-01T12:00:00.000Z');

export function quotasContract(t: Test, make: MakeQuotas): void {
  const policy = loadAccessPolicy(path.join(projectRoot, 'config', 'quotas.yaml'));
  const limit = (quota: QuotaName, subject = BASIC): number => {
    const value = policy.quotas[quota].limits[subject.trustLevel];
    if (value === null || value < 1) throw new Error(`the suite needs a positive ${quota} limit at level 1`);
    return value;
  };
  /** A clock the test moves. */
  const clockAt = (start: Date) => {
    let now = start;
    return { now: () => now, set: (next: Date) => void (now = next) };
  };
  const setUp = async (subject = BASIC, clock = clockAt(NOON)) => {
    const underTest = await make(policy, clock);
    const userId = await underTest.addUser(subject);
    const used = async (quota: QuotaName) =>
      (await underTest.quotas.status(userId)).find((s) => s.quota === quota)?.used;
    return { ...underTest, userId, used, clock };
  };

  t.test('takes what fits and counts it until the limit', async (t) => {
    const { quotas, userId, used } = await setUp();
    const uploads = limit('fileUploadsPerDay');
    await quotas.take(userId, [{ quota: 'fileUploadsPerDay', amount: uploads - 1 }]);
    await quotas.take(userId, [{ quota: 'fileUploadsPerDay', amount: 1 }]);
    t.equal(await used('fileUploadsPerDay'), uploads);
    t.match(
      (await quotas.status(userId)).find((s) => s.quota === 'fileUploadsPerDay'),
      { used: uploads, limit: uploads, remaining: 0, resetTime: nextDailyReset(NOON) },
      'status: the daily quota resets at the next midnight UTC',
    );
    await t.rejects(
      quotas.take(userId, [{ quota: 'fileUploadsPerDay', amount: 1 }]),
      refusal('fileUploadsPerDay', { limit: uploads, used: uploads, resetsAt: nextDailyReset(NOON) }),
    );
    t.equal(await used('fileUploadsPerDay'), uploads, 'the refused take counted nothing');
  });

  t.test('several amounts at once: all or nothing', async (t) => {
    const { quotas, userId, used } = await setUp();
    await t.rejects(
      quotas.take(userId, [
        { quota: 'importJobsPerDay', amount: 1 },
        { quota: 'fileUploadsPerDay', amount: limit('fileUploadsPerDay') + 1 },
      ]),
      refusal('fileUploadsPerDay'),
    );
    t.equal(await used('importJobsPerDay'), 0, 'the amount that fitted was not taken either');
    // Amounts of one quota in one request add up.
    const jobs = limit('importJobsPerDay');
    await t.rejects(
      quotas.take(userId, [
        { quota: 'importJobsPerDay', amount: jobs },
        { quota: 'importJobsPerDay', amount: 1 },
      ]),
      refusal('importJobsPerDay'),
    );
    t.equal(await used('importJobsPerDay'), 0);
  });

  t.test('check refuses as take would, and takes nothing', async (t) => {
    const { quotas, userId, used } = await setUp();
    const uploads = limit('fileUploadsPerDay');
    await quotas.check(userId, [{ quota: 'fileUploadsPerDay', amount: uploads }]);
    t.equal(await used('fileUploadsPerDay'), 0);
    await quotas.take(userId, [{ quota: 'fileUploadsPerDay', amount: uploads }]);
    await t.rejects(
      quotas.check(userId, [{ quota: 'fileUploadsPerDay', amount: 1 }]),
      refusal('fileUploadsPerDay'),
    );
    t.equal(await used('fileUploadsPerDay'), uploads);
  });

  t.test('give returns usage, never below zero', async (t) => {
    const { quotas, userId, used } = await setUp();
    await quotas.take(userId, [{ quota: 'activeSchedules', amount: 1 }]);
    await quotas.give(userId, [{ quota: 'activeSchedules', amount: 1 }]);
    t.equal(await used('activeSchedules'), 0);
    await quotas.give(userId, [{ quota: 'activeSchedules', amount: 3 }]);
    t.equal(await used('activeSchedules'), 0, 'not below zero');
    await quotas.take(userId, [{ quota: 'activeSchedules', amount: limit('activeSchedules') }]);
    t.equal(await used('activeSchedules'), limit('activeSchedules'), 'and the whole limit is there again');
  });

  t.test('daily quotas start again at midnight UTC; total quotas do not', async (t) => {
    const { quotas, userId, used, clock } = await setUp();
    await quotas.take(userId, [
      { quota: 'fileUploadsPerDay', amount: limit('fileUploadsPerDay') },
      { quota: 'activeSchedules', amount: limit('activeSchedules') },
    ]);
    clock.set(new Date('2030-01-01T23:59:59.999Z'));
    await t.rejects(
      quotas.take(userId, [{ quota: 'fileUploadsPerDay', amount: 1 }]),
      refusal('fileUploadsPerDay'),
    );
    clock.set(new Date('2030-01-02T00:00:00.000Z'));
    t.equal(await used('fileUploadsPerDay'), 0, 'a new day');
    await quotas.take(userId, [{ quota: 'fileUploadsPerDay', amount: 1 }]);
    await t.rejects(
      quotas.take(userId, [{ quota: 'activeSchedules', amount: 1 }]),
      refusal('activeSchedules', { resetsAt: null }),
    );
    t.equal(await used('activeSchedules'), limit('activeSchedules'));
  });

  t.test('per-item quotas compare each item with the ceiling and count nothing', async (t) => {
    const { quotas, userId, used } = await setUp();
    const ceiling = limit('maxFileSizeMB');
    await quotas.take(userId, [{ quota: 'maxFileSizeMB', amount: ceiling }]);
    await quotas.take(userId, [{ quota: 'maxFileSizeMB', amount: ceiling }]);
    t.equal(await used('maxFileSizeMB'), 0);
    await t.rejects(
      quotas.take(userId, [{ quota: 'maxFileSizeMB', amount: ceiling + 1 }]),
      refusal('maxFileSizeMB', { limit: ceiling, used: 0, resetsAt: null }),
    );
  });

  t.test('limits follow the trust level; admins and level 5 have none', async (t) => {
    const { quotas, userId } = await setUp();
    const basic = await quotas.limits(userId);
    t.equal(basic.fileUploadsPerDay, limit('fileUploadsPerDay'));
    t.equal(basic.scraperRepos, policy.quotas.scraperRepos.limits[1]);
    for (const subject of [
      { role: 'admin', trustLevel: 1 },
      { role: 'user', trustLevel: 5 },
    ] as const) {
      const { quotas: unlimited, userId: id } = await setUp(subject);
      t.same(
        new Set(Object.values(await unlimited.limits(id))),
        new Set([null]),
        `${subject.role} ${subject.trustLevel}`,
      );
      await unlimited.take(id, [{ quota: 'fileUploadsPerDay', amount: 1_000_000 }]);
      t.match(
        (await unlimited.status(id)).find((s) => s.quota === 'fileUploadsPerDay'),
        {
          used: 1_000_000,
          limit: null,
          remaining: null,
        },
      );
    }
  });

  t.test('concurrent takes never pass the limit together', async (t) => {
    const { quotas, userId, used } = await setUp();
    const jobs = limit('importJobsPerDay');
    const results = await Promise.allSettled(
      Array.from({ length: jobs + 10 }, () =>
        quotas.take(userId, [{ quota: 'importJobsPerDay', amount: 1 }]),
      ),
    );
    t.equal(results.filter((r) => r.status === 'fulfilled').length, jobs, 'exactly the limit was taken');
    t.equal(await used('importJobsPerDay'), jobs);
  });

  t.test('an account that does not exist is refused', async (t) => {
    const { quotas, missingUserId } = await setUp();
    const gone = { name: 'UnauthorizedError', code: 'ACCOUNT_DELETED' };
    await t.rejects(quotas.take(missingUserId, [{ quota: 'fileUploadsPerDay', amount: 1 }]), gone);
    await t.rejects(quotas.check(missingUserId, [{ quota: 'fileUploadsPerDay', amount: 1 }]), gone);
    await t.rejects(quotas.limits(missingUserId), gone);
    await t.rejects(quotas.status(missingUserId), gone);
  });
}
