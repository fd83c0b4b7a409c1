import {
  QUOTA_NAMES,
  QuotaExceededError,
  type QuotaAmount,
  type QuotaName,
} from '../../src/domain/accounts/quotas.ts';
import type { Quotas } from '../../src/ports/accounts/quotas.ts';

/**
 * A fake of the Quotas port for tests of the pipeline that are not about quotas: allows everything,
 * with no limits (or refuses `refuse`) and records what was taken and given. The service uses postgresQuotas.
 */
export function fakeQuotas(
  options: { refuse?: QuotaName } = {},
): Quotas & { taken: QuotaAmount[]; given: QuotaAmount[] } {
  const taken: QuotaAmount[] = [];
  const given: QuotaAmount[] = [];
  const refusal = (amounts: QuotaAmount[]) => {
    const refused = amounts.find((a) => a.quota === options.refuse);
    return refused
      ? new QuotaExceededError(refused.quota, {
          limit: 10,
          used: 10,
          resetsAt: new Date('2026-02-02T00:00:00.000Z'),
        })
      : null;
  };
  return {
    taken,
    given,
    async take(_userId, amounts) {
      const refused = refusal(amounts);
      if (refused) throw refused;
      taken.push(...amounts);
    },
    async give(_userId, amounts) {
      given.push(...amounts);
    },
    async check(_userId, amounts) {
      const refused = refusal(amounts);
      if (refused) throw refused;
    },
    async limits() {
      return Object.fromEntries(QUOTA_NAMES.map((quota) => [quota, null])) as Record<QuotaName, null>;
    },
    async status() {
      return [];
    },
  };
}

export const unlimitedQuotas: Quotas = fakeQuotas();
