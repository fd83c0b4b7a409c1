import { UnauthorizedError } from '../../../src/domain/access.ts';
import {
  type AccessPolicy,
  decideQuotaTake,
  mergeQuotaAmounts,
  periodStart,
  QUOTA_NAMES,
  type QuotaAmount,
  type QuotaLimit,
  type QuotaName,
  type QuotaSubject,
  quotaLimit,
  quotaRemaining,
  quotaReset,
} from '../../../src/domain/accounts/quotas.ts';
import type { Quotas } from '../../../src/ports/accounts/quotas.ts';
import type { Clock } from '../../../src/ports/clock.ts';

/**
 * The Quotas port in memory, for use-case tests about quotas that need no database: usage per
 * (user, quota, period) in a map, decided by the same domain rule as postgresQuotas
 * (decideQuotaTake). It passes the same behaviour suite as postgresQuotas
 * (test/contracts/accounts/quotas.ts). Accounts are added with `addUser`; any other id is an
 * account that no longer exists. (fakeQuotas in test/helpers/quotas.ts is the other kind: it allows
 * everything and records, for tests that are not about quotas.)
 */
export function memoryQuotas(
  policy: AccessPolicy,
  clock: Clock,
): Quotas & { addUser(subject: QuotaSubject): number } {
  const subjects = new Map<number, QuotaSubject>();
  const usage = new Map<string, number>();
  const key = (userId: number, quota: QuotaName, at: Date) =>
    `${userId} ${quota} ${periodStart(policy.quotas[quota].period, at)}`;

  const subjectOf = (userId: number): QuotaSubject => {
    const subject = subjects.get(userId);
    if (!subject) throw new UnauthorizedError('The account no longer exists', 'ACCOUNT_DELETED');
    return subject;
  };
  const usedOf = (userId: number, at: Date) =>
    new Map(QUOTA_NAMES.map((quota) => [quota, usage.get(key(userId, quota, at)) ?? 0]));
  const add = (userId: number, amounts: QuotaAmount[], at: Date, sign: 1 | -1) => {
    for (const { quota, amount } of mergeQuotaAmounts(amounts)) {
      if (policy.quotas[quota].period === 'perItem' || amount === 0) continue;
      const k = key(userId, quota, at);
      usage.set(k, Math.max(0, (usage.get(k) ?? 0) + sign * amount));
    }
  };
  const limitsOf = (subject: QuotaSubject) =>
    Object.fromEntries(QUOTA_NAMES.map((q) => [q, quotaLimit(policy, q, subject)])) as Record<
      QuotaName,
      QuotaLimit
    >;
  // Each method decides and writes with no await in between: the atomicity Postgres gets from its
  // row locks, JavaScript's one thread gives here.
  return {
    addUser(subject) {
      const id = subjects.size + 1;
      subjects.set(id, subject);
      return id;
    },
    async take(userId, amounts) {
      if (amounts.every((a) => a.amount === 0)) return;
      const at = clock.now();
      const refusal = decideQuotaTake(policy, subjectOf(userId), amounts, usedOf(userId, at), at);
      if (refusal) throw refusal;
      add(userId, amounts, at, 1);
    },
    async give(userId, amounts) {
      add(userId, amounts, clock.now(), -1);
    },
    async check(userId, amounts) {
      const at = clock.now();
      const refusal = decideQuotaTake(policy, subjectOf(userId), amounts, usedOf(userId, at), at);
      if (refusal) throw refusal;
    },
    async limits(userId) {
      return limitsOf(subjectOf(userId));
    },
    async status(userId) {
      const at = clock.now();
      const limits = limitsOf(subjectOf(userId));
      const used = usedOf(userId, at);
      return QUOTA_NAMES.map((quota) => {
        const rule = policy.quotas[quota];
        const counted = rule.period === 'perItem' ? 0 : (used.get(quota) ?? 0);
        return {
          quota,
          used: counted,
          limit: limits[quota],
          remaining: quotaRemaining(counted, limits[quota]),
          resetTime: quotaReset(rule.period, at),
          description: rule.description,
        };
      });
    },
  };
}
