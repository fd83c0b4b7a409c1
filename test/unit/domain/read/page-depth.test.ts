import t from 'tap';
import { parsePage } from '../../../../src/domain/read/read-query.ts';
import { checkPageDepth, MAX_PAGE_OFFSET } from '../../../../src/domain/read/page-depth.ts';

// Issue 30 §2: a page by number that skips more than MAX_PAGE_OFFSET rows is refused before any
// query, with a message that names the deepest page and how to go on.

t.test('pages up to the bound pass; one deeper is a 400 naming the parameter', async (t) => {
  checkPageDepth({ skipped: 0, limit: 10 }, 'page', 'x');
  checkPageDepth({ skipped: MAX_PAGE_OFFSET, limit: 1000 }, 'page', 'x');
  t.throws(() => checkPageDepth({ skipped: MAX_PAGE_OFFSET + 1, limit: 1 }, 'page', 'use the cursor'), {
    name: 'ValidationError',
    field: 'page',
    code: 'PAGE_TOO_DEEP',
    message:
      /skips 10001 rows; pages by number reach at most 10000 rows deep \(page=10001 at this limit\): use the cursor/,
  });
  t.throws(() => checkPageDepth({ skipped: 30_000, limit: 300 }, 'offset', 'follow next'), {
    field: 'offset',
    message: /\(offset=9900 at this limit\)/,
  });
});

t.test('/api/v1/events: page times limit, pointing to cursor', async (t) => {
  t.same(parsePage({ page: '11', limit: '1000' }), { page: 11, limit: 1000 });
  t.same(parsePage({ page: '101' }), { page: 101, limit: 100 });
  t.throws(() => parsePage({ page: '12', limit: '1000' }), {
    field: 'page',
    code: 'PAGE_TOO_DEEP',
    message: /page=11 at this limit\): page on with cursor=<nextCursor/,
  });
  t.throws(() => parsePage({ page: '1000000' }), { code: 'PAGE_TOO_DEEP' });
});
