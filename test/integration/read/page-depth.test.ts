import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { MAX_PAGE_OFFSET } from '../../../src/domain/read/page-depth.ts';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';

// Issue 30 §2: a page by number skips at most 10,000 rows on every list that pages by number
// (collections `page`, /api/v1/events `page`, OGC `offset`); deeper is a 400 PAGE_TOO_DEEP that
// says how to go on, and the way it names reaches the rows beyond: the OGC next links switch to a
// cursor past the bound, so following them reads a collection whole.

const TOTAL = MAX_PAGE_OFFSET + 2_500;

t.test('deep pages: refused with the way on, which reaches every row', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  await db.pool.query(sql.unsafe`
    with c as (insert into catalogs (slug, title, is_public) values ('deep', 'Deep', true) returning id),
    d as (insert into datasets (catalog_id, slug, title, is_public) select id, 'many', 'Many', true from c returning id, catalog_id)
    insert into events (dataset_id, catalog_id, unique_id, title, data, event_timestamp)
    select d.id, d.catalog_id, 'e' || n, 'event ' || n, '{}'::jsonb, timestamptz '2020-01-01' + n * interval '1 minute'
    from d cross join generate_series(1, ${TOTAL}) n`);

  const refused = async (url: string, parameter: string, way: RegExp) => {
    const answer = await app.inject({ method: 'GET', url });
    t.equal(answer.statusCode, 400, url);
    t.match(answer.json(), {
      error: 'Bad Request',
      code: 'PAGE_TOO_DEEP',
      details: `field: ${parameter}`,
      message: way,
    });
  };
  await refused('/api/events?page=2147483647', 'page', /where\[id\]\[greater_than\]=<its id>/);
  await refused('/api/events?page=12&limit=1000', 'page', /page=11 at this limit/);
  await refused('/api/v1/events?page=12&limit=1000', 'page', /cursor=<nextCursor/);
  await refused('/ogc/collections/many/items?limit=1000&offset=11000', 'offset', /follow the next links/);
  t.equal((await app.inject({ method: 'GET', url: '/api/events?page=11&limit=1000' })).statusCode, 200);
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/events?page=11&limit=1000' })).statusCode, 200);

  // The collections' keyset paging by hand reaches past the bound.
  const after = await app.inject({
    method: 'GET',
    url: `/api/events?sort=id&limit=1000&where[id][greater_than]=${TOTAL - 5}`,
  });
  t.equal(after.json().totalDocs, 5);

  // The OGC next links: by offset up to the bound, then by cursor, to the last item, none twice.
  let url: string | undefined = '/ogc/collections/many/items?limit=1000';
  const seen: number[] = [];
  const kinds: string[] = [];
  while (url) {
    const answer = await app.inject({ method: 'GET', url });
    t.equal(answer.statusCode, 200, url);
    const body = answer.json() as {
      features: Array<{ id: number }>;
      links: Array<{ rel: string; href: string }>;
      numberMatched: number;
    };
    t.equal(body.numberMatched, TOTAL);
    seen.push(...body.features.map((feature) => feature.id));
    const next = body.links.find((link) => link.rel === 'next')?.href;
    if (next) kinds.push(new URL(next).searchParams.has('cursor') ? 'cursor' : 'offset');
    url = next ? next.replace(/^http:\/\/[^/]+/, '') : undefined;
  }
  t.equal(seen.length, TOTAL, 'every item once');
  t.equal(new Set(seen).size, TOTAL);
  t.same(
    seen,
    [...seen].sort((a, b) => a - b),
    'in id order',
  );
  t.same(kinds, [...Array(10).fill('offset'), 'cursor', 'cursor'], 'offsets to 10,000, then cursors');

  const both = await app.inject({
    method: 'GET',
    url: '/ogc/collections/many/items?offset=10&limit=10&cursor=abc',
  });
  t.equal(both.statusCode, 400);
});
