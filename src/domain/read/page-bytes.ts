import { ValidationError } from '../errors.ts';

// Collection pages are bounded in bytes as well as rows (COLLECTION_PAGING.maxLimit): a page of
// large documents (an event whose data held a 50 MB cell made /api/events?limit=1000 answer 107 MB)
// is refused with a 400 naming a limit that fits, rather than built and sent. Pages are numbered,
// so cutting a page short would shift every later page; asking for a smaller limit keeps paging
// consistent.

/** Most bytes of documents one collection page may hold (their JSON text). */
const PAGE_MAX_BYTES = 8 * 1024 * 1024;

export function checkPageBytes(docs: readonly unknown[], limit: number, maxBytes = PAGE_MAX_BYTES): void {
  const encoder = new TextEncoder();
  let bytes = 0;
  let counted = 0;
  for (const doc of docs) {
    bytes += encoder.encode(JSON.stringify(doc) ?? '').length;
    counted += 1;
    if (bytes > maxBytes) break;
  }
  if (bytes <= maxBytes) return;
  const average = bytes / counted;
  const fits = Math.max(1, Math.floor(maxBytes / average) - 1);
  throw new ValidationError(
    `this page would hold more than ${maxBytes} bytes of documents; ask for limit=${Math.min(fits, limit - 1)} or fewer`,
    { field: 'limit', code: 'PAGE_TOO_LARGE' },
  );
}
