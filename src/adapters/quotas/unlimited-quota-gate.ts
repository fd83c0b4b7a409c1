import type { QuotaGate } from '../../ports/ingest-ports.ts';

/**
 * Allows everything. A stand-in until the accounts branch (issue 3) lands its quota accounting,
 * which replaces this adapter in src/compose.ts; it does not pretend to count or enforce anything.
 */
export const unlimitedQuotaGate: QuotaGate = {
  async consume() {
    return { ok: true };
  },
};
