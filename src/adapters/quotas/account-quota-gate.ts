import { QuotaExceededError } from '../../domain/quotas.ts';
import type { QuotaGate } from '../../ports/ingest-ports.ts';
import type { QuotaService } from '../../ports/quota-service.ts';

const PER_ITEM = new Set(['eventsPerImport', 'maxFileSizeMB']);

/**
 * Ingestion's quota questions answered by the accounts' quota service: daily and total quotas are
 * taken atomically, per-item ceilings only checked. Anonymous callers (no user id) are not counted:
 * who may upload at all is the routes' access decision, not a quota.
 */
export function accountQuotaGate(service: QuotaService): QuotaGate {
  return {
    async consume(userId, quota, amount) {
      if (userId === null) return { ok: true };
      try {
        if (PER_ITEM.has(quota)) await service.check(userId, quota, amount);
        else await service.consume(userId, quota, amount);
        return { ok: true };
      } catch (error) {
        if (!(error instanceof QuotaExceededError)) throw error;
        const status = (await service.status(userId)).find((s) => s.quota === quota);
        return {
          ok: false,
          quota,
          limit: status?.limit ?? 0,
          resetsAt: status?.resetTime?.toISOString() ?? null,
        };
      }
    },
  };
}
