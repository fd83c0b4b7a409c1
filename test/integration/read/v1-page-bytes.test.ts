import t from 'tap';
import { insertLargeEvents } from '../../helpers/v1-fixture.ts';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';

// Issue 30 §3: /api/v1/events and the OGC items are bounded in bytes as the collection pages are
// (one rule, src/domain/read/page-bytes.ts): a page over 8 MB is a 400 naming the largest limit that
// fits, and a page at that limit answers.

t.test('a page of large events over the byte budget is refused, naming a limit that fits', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  // Four events of 2.5 MB each: 10 MB in a page of 4; 2 of them (5 MB) fit in 8 MB with room.
  await insertLargeEvents(db.pool, 4, 2560 * 1024);

  for (const url of [
    '/api/v1/events?limit=10',
    '/api/v1/events?limit=1000&sort=-eventTimestamp',
    '/ogc/collections/large-rows/items?limit=10',
  ]) {
    const refused = await app.inject({ method: 'GET', url });
    t.equal(refused.statusCode, 400, url);
    t.match(
      refused.json(),
      {
        error: 'Bad Request',
        code: 'PAGE_TOO_LARGE',
        message: /more than 8388608 bytes of documents; ask for limit=2 or fewer/,
      },
      url,
    );
  }
  const fits = await app.inject({ method: 'GET', url: '/api/v1/events?limit=2' });
  t.equal(fits.statusCode, 200, 'the limit the refusal named answers');
  t.equal(fits.json().events.length, 2);
  // Paging by cursor meets the same bound: the next pages are asked with the limit that fits.
  const cursor = fits.json().nextCursor as string;
  const next = await app.inject({
    method: 'GET',
    url: `/api/v1/events?limit=4&cursor=${encodeURIComponent(cursor)}`,
  });
  t.equal(next.statusCode, 200, 'two events left after the cursor: 5 MB fit');
  t.equal(next.json().events.length, 2);
  // The documented date range ends with 9999-12-31 (issue 30 §7): accepted, as no end.
  const late = await app.inject({ method: 'GET', url: '/api/v1/events?limit=2&endDate=9999-12-31' });
  t.equal(late.statusCode, 200, late.body.slice(0, 200));
  t.equal(late.json().events.length, 2);
  const items = await app.inject({ method: 'GET', url: '/ogc/collections/large-rows/items?limit=2' });
  t.equal(items.statusCode, 200);
  t.equal(items.json().features.length, 2);
});
