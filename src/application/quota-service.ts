import { UnauthorizedError } from '../domain/access.ts';
import {
  type AccessPolicy,
  nextDailyReset,
  periodStart,
  QUOTA_NAMES,
  type QuotaName,
  QuotaExceededError,
  quotaLimit,
} from '../domain/quotas.ts';
import type { QuotaService, QuotaStatus } from '../ports/quota-service.ts';
import type { QuotaUsageStore } from '../ports/quota-usage.ts';
import type { UserStore } from '../ports/user-store.ts';

// The QuotaService others call: limits from the access policy by the user's current trust level,
// usage taken atomically in the store.

export type QuotaDeps = {
  usage: QuotaUsageStore;
  users: Pick<UserStore, 'findById'>;
  policy: AccessPolicy;
  now: () => Date;
};

export function quotaService(deps: QuotaDeps): QuotaService {
  const subject = async (userId: number) => {
    const user = await deps.users.findById(userId);
    if (!user) throw new UnauthorizedError('The account no longer exists', 'ACCOUNT_DELETED');
    return user;
  };
  const status = (quota: QuotaName, used: number, limit: number | null, now: Date): QuotaStatus => {
    const rule = deps.policy.quotas[quota];
    return {
      quota,
      used,
      limit,
      remaining: limit === null ? null : Math.max(0, limit - used),
      resetTime: rule.period === 'daily' ? nextDailyReset(now) : null,
      description: rule.description,
    };
  };
  return {
    async consume(userId, quota, amount = 1) {
      const user = await subject(userId);
      const now = deps.now();
      const rule = deps.policy.quotas[quota];
      const limit = quotaLimit(deps.policy, quota, user);
      if (rule.period === 'perItem') {
        if (limit !== null && amount > limit) throw new QuotaExceededError(quota, limit);
        return status(quota, 0, limit, now);
      }
      const used = await deps.usage.take(userId, quota, periodStart(rule.period, now), amount, limit);
      if (used === null) {
        throw new QuotaExceededError(
          quota,
          limit ?? 0,
          `Quota ${quota} exceeded: ${rule.description.toLowerCase()} is limited to ${limit} for your trust level` +
            (rule.period === 'daily' ? `; it resets at ${nextDailyReset(now).toISOString()}` : ''),
        );
      }
      return status(quota, used, limit, now);
    },
    async release(userId, quota, amount = 1) {
      const rule = deps.policy.quotas[quota];
      if (rule.period === 'perItem') return;
      await deps.usage.give(userId, quota, periodStart(rule.period, deps.now()), amount);
    },
    async check(userId, quota, amount) {
      const user = await subject(userId);
      const limit = quotaLimit(deps.policy, quota, user);
      if (limit !== null && amount > limit) throw new QuotaExceededError(quota, limit);
    },
    async status(userId) {
      const user = await subject(userId);
      const now = deps.now();
      const periods = QUOTA_NAMES.filter((q) => deps.policy.quotas[q].period !== 'perItem').map((quota) => ({
        quota,
        period: periodStart(deps.policy.quotas[quota].period, now),
      }));
      const used = await deps.usage.read(userId, periods);
      return QUOTA_NAMES.map((quota) =>
        status(quota, used.get(quota) ?? 0, quotaLimit(deps.policy, quota, user), now),
      );
    },
  };
}
