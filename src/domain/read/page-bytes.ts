import { ValidationError } from '../errors.ts';

// Pages are bounded in bytes as well as rows (a page's `limit`): a page of large documents (an event
// whose data held a 50 MB cell made /api/events?limit=1000 answer 107 MB; 300 events of 240 KB made
// /api/v1/events and the OGC items answer 72 MB each) is refused with a 400 naming a limit that
// fits, rather than sent. Pages are numbered, so cutting a page short would shift every later page;
// asking for a smaller limit keeps paging consistent. One rule for the collection pages (documents)
// and the read API's pages (/api/v1/events and /ogc items, whose JSON text the database writes).

/** Most bytes of documents one page may hold (their JSON text). */
const PAGE_MAX_BYTES = 8 * 1024 * 1024;

/** The refusal of a page of `counted` documents that came to `bytes` (over `maxBytes`), or nothing. */
function refuseOverBudget(bytes: number, counted: number, limit: number, maxBytes: number): void {
  if (bytes <= maxBytes) return;
  const average = bytes / Math.max(1, counted);
  const fits = Math.max(1, Math.floor(maxBytes / average) - 1);
  throw new ValidationError(
    `this page would hold more than ${maxBytes} bytes of documents; ask for limit=${Math.max(1, Math.min(fits, limit - 1))} or fewer`,
    { field: 'limit', code: 'PAGE_TOO_LARGE' },
  );
}

export function checkPageBytes(docs: readonly unknown[], limit: number, maxBytes = PAGE_MAX_BYTES): void {
  const encoder = new TextEncoder();
  let bytes = 0;
  let counted = 0;
  for (const doc of docs) {
    bytes += encoder.encode(JSON.stringify(doc) ?? '').length;
    counted += 1;
    if (bytes > maxBytes) break;
  }
  refuseOverBudget(bytes, counted, limit, maxBytes);
}

/**
 * The same bound on a page already encoded: `bytes` of JSON text holding `count()` documents
 * (counted only when the page is refused, for the limit the refusal names).
 */
export function checkPageSize(
  bytes: number,
  count: () => number,
  limit: number,
  maxBytes = PAGE_MAX_BYTES,
): void {
  if (bytes <= maxBytes) return;
  refuseOverBudget(bytes, count(), limit, maxBytes);
}
