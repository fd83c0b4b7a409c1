import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import {
  authHeaders,
  ingestApp,
  signIn,
  upload,
  type UploadedDoc,
  waitForFile,
} from '../../fixtures/ingest/client.ts';

// Issue 28 §5: an import's rows the geocoder could not place, counted, listed (JSON and CSV) and
// placed afterwards by other columns, through the offline gazetteer. Rows 3 to 5 are not placed:
// an unknown place, an ambiguous one (low confidence) and a formula-like unknown one. alt_place,
// north and east are the columns a fix may name (names schema detection does not take).

const CSV = [
  'time,title,place,alt_place,north,east',
  '2026-01-01T00:00:00Z,a,Berlin,,,',
  '2026-01-02T00:00:00Z,b,Paris,,,',
  '2026-01-03T00:00:00Z,c,Qwxzzy Nowhere,Munich,,',
  '2026-01-04T00:00:00Z,d,Springfield,Qwxzzy,40.7,-89.6',
  '2026-01-05T00:00:00Z,e,=Qwxzzy(1),,,',
].join('\n');

const Located = row(
  Type.Object({
    title: Type.String(),
    lat: Type.Union([Type.Number(), Type.Null()]),
    updated: Type.String(),
    by: Type.Union([Type.String(), Type.Null()]),
  }),
);

type Report = {
  geocoded: boolean;
  counts: { rows: number; located: number; notFound: number; lowConfidence: number };
  unplaced: { row: number; address: string; reason: string; candidate: { name: string | null } | null }[];
  columns: string[];
  placed?: number;
};

t.test('the rows not placed: counted, listed, downloaded and placed by other columns', async (t) => {
  const { app, db, catalogId } = await ingestApp(t);
  const doc = (
    (await upload(app, catalogId, { name: 'places.csv', content: CSV })).json() as { doc: UploadedDoc }
  ).doc;
  t.equal((await waitForFile(app, doc.id)).status, 'completed');
  const jobId = doc.jobs[0]?.id ?? 0;
  const base = `/api/ingest-jobs/${jobId}/geocoding`;
  const owner = authHeaders(app);
  const stranger = { authorization: `Bearer ${(await signIn(app, db.pool)).token}` };
  const events = () =>
    db.pool.any(
      sql.type(Located)`select title, round(st_y(location))::float8 as lat, updated_at::text as updated,
        located_by ->> 'method' as by from events order by title`,
    );
  const place = (payload: unknown, headers: Record<string, string> = owner) =>
    app.inject({ method: 'POST', url: `${base}/place`, headers, payload: payload as object });

  const report = (await app.inject({ url: base, headers: owner })).json() as Report;
  t.same(report.counts, { rows: 5, located: 2, notFound: 2, lowConfidence: 1 });
  t.same(
    report.unplaced.map((r) => [r.row, r.address, r.reason]),
    [
      [3, 'Qwxzzy Nowhere', 'not-found'],
      [4, 'Springfield', 'low-confidence'],
      [5, '=Qwxzzy(1)', 'not-found'],
    ],
  );
  t.equal(report.unplaced[1]?.candidate?.name, 'Springfield', 'the place found under the threshold');
  t.same(report.columns, ['time', 'title', 'place', 'alt_place', 'north', 'east']);

  const csv = await app.inject({ url: `${base}/unplaced.csv`, headers: owner });
  t.equal(csv.statusCode, 200);
  t.match(csv.headers['content-type'], /^text\/csv/);
  const lines = csv.body.trimEnd().split('\r\n');
  t.equal(lines[0], 'row,address,reason,candidate,candidateCountry,candidateRegion,confidence');
  t.equal(lines.length, 4);
  t.match(lines[2], /^4,Springfield,low-confidence,Springfield,US,/);
  t.equal(lines[3], "5,'=Qwxzzy(1),not-found,,,,", 'a formula is defused');

  t.test('another user gets 404 and anonymous callers 401, on every route', async (t) => {
    for (const headers of [stranger, {}]) {
      const status = headers === stranger ? 404 : 401;
      t.equal((await app.inject({ url: base, headers })).statusCode, status);
      t.equal((await app.inject({ url: `${base}/unplaced.csv`, headers })).statusCode, status);
      t.equal((await place({ latitude: 'north', longitude: 'east' }, headers)).statusCode, status);
    }
    t.equal((await app.inject({ url: '/api/ingest-jobs/999999/geocoding', headers: owner })).statusCode, 404);
  });

  t.test('bad fixes are 400 and change nothing', async (t) => {
    const before = await events();
    for (const payload of [
      { latitude: 'nope', longitude: 'east' },
      { address: ['alt_place', 'missing'] },
      { address: [] },
      { address: ['alt_place'], latitude: 'north' },
      { latitude: 'north' },
      {},
    ]) {
      const answer = await place(payload);
      t.equal(answer.statusCode, 400, JSON.stringify(payload));
      t.match(answer.json(), { error: String });
    }
    t.same((await place({ latitude: 'nope', longitude: 'east' })).json(), {
      error: 'Bad Request',
      message: 'the file has no column "nope"',
      details: 'field: latitude',
      code: 'UNKNOWN_COLUMN',
    });
    t.same(await events(), before);
  });

  // The read API answers from a cache kept per dataset version: a placement must move that version.
  const unlocatedOnTheMap = async () =>
    (
      (await app.inject({ url: '/api/v1/events?limit=10&sort=eventTimestamp' })).json() as {
        events: { location: unknown }[];
      }
    ).events.filter((e) => e.location === null).length;
  t.equal(await unlocatedOnTheMap(), 3);

  t.test('other address columns place only the rows not placed, through the geocoder', async (t) => {
    const before = await events();
    const fixed = (await place({ address: ['alt_place'] })).json() as Report;
    t.equal(fixed.placed, 1, 'Munich; Qwxzzy is not found either, row 5 has no alt_place');
    t.same(fixed.counts, { rows: 5, located: 3, notFound: 1, lowConfidence: 1 });
    const after = await events();
    t.same(
      after.map((e) => [e.title, e.lat, e.by]),
      [
        ['a', 53, 'geocoded'],
        ['b', 49, 'geocoded'],
        ['c', 48, 'geocoded'],
        ['d', null, null],
        ['e', null, null],
      ],
    );
    for (const title of ['a', 'b'])
      t.equal(
        after.find((e) => e.title === title)?.updated,
        before.find((e) => e.title === title)?.updated,
        `${title}, placed at import, is untouched`,
      );
  });

  t.test('coordinate columns place the rest that have them, once', async (t) => {
    const fixed = (await place({ latitude: 'north', longitude: 'east' })).json() as Report;
    t.equal(fixed.placed, 1);
    t.same(fixed.counts, { rows: 5, located: 4, notFound: 1, lowConfidence: 0 });
    t.same(
      fixed.unplaced.map((r) => r.row),
      [5],
    );
    const placed = await events();
    t.same(
      placed.map((e) => [e.title, e.lat]),
      [
        ['a', 53],
        ['b', 49],
        ['c', 48],
        ['d', 41],
        ['e', null],
      ],
    );
    const again = (await place({ latitude: 'north', longitude: 'east' })).json() as Report;
    t.equal(again.placed, 0, 'a second post changes nothing');
    t.same(await events(), placed);
    t.equal(await unlocatedOnTheMap(), 1, 'the read API shows them placed');
  });
});
