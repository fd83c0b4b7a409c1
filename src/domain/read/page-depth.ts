import { ValidationError } from '../errors.ts';

// How deep a page by number may start (issue 30 §2). A numbered page (`page` of the collections and
// /api/v1/events, `offset` of the OGC items) is read by reading and skipping every row before it:
// `page=2147483647` cost 4.6-6.4 s of a pool connection. Deeper than this bound, a client pages by
// position instead, which costs an index descent at any depth: `cursor` of /api/v1/events and of the
// OGC items (their `next` link carries it past the bound), `where[id][greater_than]` with `sort=id`
// on the collections.

/** The most rows a page by number may skip. */
export const MAX_PAGE_OFFSET = 10_000;

/**
 * Refuses (400 PAGE_TOO_DEEP, naming `parameter`) a page of `limit` rows that skips more than
 * MAX_PAGE_OFFSET rows; `deeper` tells the client how to go on.
 */
export function checkPageDepth(
  page: { skipped: number; limit: number },
  parameter: string,
  deeper: string,
): void {
  if (page.skipped <= MAX_PAGE_OFFSET) return;
  const deepest = Math.floor(MAX_PAGE_OFFSET / page.limit) * page.limit;
  const reach =
    parameter === 'offset'
      ? `offset=${deepest} at this limit`
      : `page=${deepest / page.limit + 1} at this limit`;
  throw new ValidationError(
    `this ${parameter} skips ${page.skipped} rows; pages by number reach at most ${MAX_PAGE_OFFSET} rows deep (${reach}): ${deeper}`,
    { field: parameter, code: 'PAGE_TOO_DEEP' },
  );
}
