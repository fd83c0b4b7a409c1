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

/** UTF-8 length of a string without encoding it (a refused page may be tens of MB). */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff) {
      // A surrogate pair is one 4-byte character.
      bytes += 4;
      i += 1;
    } else bytes += 3;
  }
  return bytes;
}

/** The same bound on a page already written as JSON text: `count` documents in `json`. */
export function checkPageText(json: string, count: number, limit: number, maxBytes = PAGE_MAX_BYTES): void {
  // At most 3 bytes per UTF-16 unit: a page that short fits without counting.
  if (json.length * 3 <= maxBytes) return;
  refuseOverBudget(utf8Length(json), count, limit, maxBytes);
}
