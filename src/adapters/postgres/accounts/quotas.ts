import { Type } from 'typebox';
import { UnauthorizedError } from '../../../domain/access.ts';
import {
  type AccessPolicy,
  decideQuotaTake,
  fitsQuota,
  LIFETIME_PERIOD,
  QuotaExceededError,
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
} from '../../../domain/accounts/quotas.ts';
import type { TrustLevel } from '../../../domain/accounts/users.ts';
import type { EventQuota } from '../../../ports/ingest/event-batch-writer.ts';
import type { Quotas } from '../../../ports/accounts/quotas.ts';
import { type DatabasePool, row, sql } from '../database.ts';
import type { Clock } from '../../../ports/clock.ts';

// The Quotas port over the quota_usage table: one row per (user, quota, period). A take locks the
// rows it needs (in quota-name order, so concurrent takers never deadlock), lets the domain decide
// with the usage it sees under the lock, and adds to every row or to none in one transaction.

type Connection = Pick<DatabasePool, 'query' | 'any' | 'maybeOne'>;

const SubjectRow = Type.Object({ role: Type.String(), trust_level: Type.Number() });
const UsageRow = Type.Object({ quota: Type.String(), used: Type.Number() });

async function subjectOf(db: Connection, userId: number): Promise<QuotaSubject> {
  const found = await db.maybeOne(sql.type(row(SubjectRow))`
    select role, trust_level from users where id = ${userId}`);
  if (!found) throw new UnauthorizedError('The account no longer exists', 'ACCOUNT_DELETED');
  return { role: found.role as QuotaSubject['role'], trustLevel: found.trust_level as TrustLevel };
}

/** Usage of the counted quotas among `amounts` (perItem ones have none), locked when `lock`. */
async function usageOf(
  db: Connection,
  policy: AccessPolicy,
  userId: number,
  amounts: QuotaAmount[],
  now: Date,
  lock: boolean,
): Promise<Map<QuotaName, number>> {
  const counted = mergeQuotaAmounts(amounts).filter(({ quota }) => policy.quotas[quota].period !== 'perItem');
  if (counted.length === 0) return new Map();
  const quotas = sql.array(
    counted.map((a) => a.quota),
    'text',
  );
  const periods = sql.array(
    counted.map((a) => periodStart(policy.quotas[a.quota].period, now)),
    'date',
  );
  if (lock) {
    // The rows must exist to be locked; a new row starts at zero.
    await db.query(sql.unsafe`
      insert into quota_usage (user_id, quota, period_start, used)
      select ${userId}, quota, period_start, 0 from unnest(${quotas}, ${periods}) as w(quota, period_start)
      order by quota
      on conflict (user_id, quota, period_start) do nothing`);
  }
  const rows = await db.any(sql.type(row(UsageRow))`
    select u.quota, u.used from quota_usage u
    join unnest(${quotas}, ${periods}) as w(quota, period_start)
      on w.quota = u.quota and w.period_start = u.period_start
    where u.user_id = ${userId}
    order by u.quota
    ${lock ? sql.fragment`for update of u` : sql.fragment``}`);
  return new Map(rows.map((r) => [r.quota as QuotaName, r.used]));
}

async function addUsage(
  db: Connection,
  policy: AccessPolicy,
  userId: number,
  amounts: QuotaAmount[],
  now: Date,
  sign: 1 | -1,
): Promise<void> {
  for (const { quota, amount } of mergeQuotaAmounts(amounts)) {
    const rule = policy.quotas[quota];
    if (rule.period === 'perItem' || amount === 0) continue;
    const period = periodStart(rule.period, now);
    if (sign === 1) {
      await db.query(sql.unsafe`
        insert into quota_usage (user_id, quota, period_start, used)
        values (${userId}, ${quota}, ${period}::date, ${amount})
        on conflict (user_id, quota, period_start) do update set used = quota_usage.used + excluded.used`);
    } else {
      await db.query(sql.unsafe`
        update quota_usage set used = greatest(0, used - ${amount})
        where user_id = ${userId} and quota = ${quota} and period_start = ${period}::date`);
    }
  }
}

/**
 * Counts `created` new events of an import inside the caller's transaction (the batch that stored
 * them), with the limits resolved when the import's stage started: the job's eventsPerImport
 * (`createdBefore` by the job already) and the user's totalEvents (its usage row locked here).
 * Throws the refusal with the fewest events left, leaving the rollback to the caller.
 */
export async function takeEventsIn(
  tx: Connection,
  quota: EventQuota,
  created: number,
  createdBefore: number,
): Promise<void> {
  const refusals: QuotaExceededError[] = [];
  if (!fitsQuota(createdBefore, created, quota.eventsPerImport)) {
    refusals.push(
      new QuotaExceededError(
        'eventsPerImport',
        { limit: quota.eventsPerImport ?? 0, used: createdBefore, resetsAt: null },
        `the import reached its limit of ${quota.eventsPerImport} events (eventsPerImport for your trust level)`,
      ),
    );
  }
  await tx.query(sql.unsafe`
    insert into quota_usage (user_id, quota, period_start, used)
    values (${quota.userId}, 'totalEvents', ${LIFETIME_PERIOD}::date, 0)
    on conflict (user_id, quota, period_start) do nothing`);
  const used = Number(
    (
      await tx.maybeOne(sql.type(row(Type.Object({ used: Type.Number() })))`
        select used from quota_usage
        where user_id = ${quota.userId} and quota = 'totalEvents' and period_start = ${LIFETIME_PERIOD}::date
        for update`)
    )?.used ?? 0,
  );
  if (!fitsQuota(used, created, quota.totalEvents)) {
    refusals.push(
      new QuotaExceededError(
        'totalEvents',
        { limit: quota.totalEvents ?? 0, used, resetsAt: null },
        `your account reached its limit of ${quota.totalEvents} stored events (totalEvents for your trust level)`,
      ),
    );
  }
  const tightest = refusals.sort((a, b) => a.limit - a.used - (b.limit - b.used))[0];
  if (tightest) throw tightest;
  await tx.query(sql.unsafe`
    update quota_usage set used = used + ${created}
    where user_id = ${quota.userId} and quota = 'totalEvents' and period_start = ${LIFETIME_PERIOD}::date`);
}

export function postgresQuotas(pool: DatabasePool, policy: AccessPolicy, clock: Clock): Quotas {
  const limitsOf = (subject: QuotaSubject) =>
    Object.fromEntries(QUOTA_NAMES.map((q) => [q, quotaLimit(policy, q, subject)])) as Record<
      QuotaName,
      QuotaLimit
    >;
  return {
    async take(userId, amounts) {
      if (amounts.every((a) => a.amount === 0)) return;
      const at = clock.now();
      await pool.transaction(async (tx) => {
        const subject = await subjectOf(tx, userId);
        const used = await usageOf(tx, policy, userId, amounts, at, true);
        const refusal = decideQuotaTake(policy, subject, amounts, used, at);
        // Thrown inside the transaction: it rolls back, and nothing was taken.
        if (refusal) throw refusal;
        await addUsage(tx, policy, userId, amounts, at, 1);
      });
    },
    async give(userId, amounts) {
      await addUsage(pool, policy, userId, amounts, clock.now(), -1);
    },
    async check(userId, amounts) {
      const at = clock.now();
      const subject = await subjectOf(pool, userId);
      const used = await usageOf(pool, policy, userId, amounts, at, false);
      const refusal = decideQuotaTake(policy, subject, amounts, used, at);
      if (refusal) throw refusal;
    },
    async limits(userId) {
      return limitsOf(await subjectOf(pool, userId));
    },
    async status(userId) {
      const at = clock.now();
      const limits = limitsOf(await subjectOf(pool, userId));
      const used = await usageOf(
        pool,
        policy,
        userId,
        QUOTA_NAMES.map((quota) => ({ quota, amount: 0 })),
        at,
        false,
      );
      return QUOTA_NAMES.map((quota) => {
        const rule = policy.quotas[quota];
        const usage = used.get(quota) ?? 0;
        return {
          quota,
          used: usage,
          limit: limits[quota],
          remaining: quotaRemaining(usage, limits[quota]),
          resetTime: quotaReset(rule.period, at),
          description: rule.description,
        };
      });
    },
  };
}
