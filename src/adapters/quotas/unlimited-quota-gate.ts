import type { QuotaGate } from '../../ports/ingest-ports.ts';

/**
 * Allows everything, counting nothing: for tests of the pipeline that are not about quotas. The
 * service itself uses accountQuotaGate (src/compose.ts).
 */
export const unlimitedQuotaGate: QuotaGate = {
  async consume() {
    return { ok: true };
  },
};
