import t from 'tap';
import { rejected } from '../../../helpers/validation.ts';
import { MAX_PAGE_OFFSET } from '../../../../src/domain/read/page-depth.ts';
import {
  checkFormat,
  isCollectionId,
  OGC_DEFAULT_LIMIT,
  OGC_MAX_LIMIT,
  pageLinks,
  parseBbox,
  parseDatetime,
  parseFeatureId,
  parseLimit,
  parseOffset,
  refuseUnsupportedParameters,
} from '../../../../src/domain/read/ogc.ts';

// The OGC API – Features parameter rules: what each accepts, and a 400 naming the parameter for the rest.

t.test('bbox: four numbers, the antimeridian allowed, a 3D box refused', async (t) => {
  t.equal(parseBbox(undefined), null);
  // Given but empty: a 400, not "no box" (which answered the whole collection; issue 35 §4).
  rejected(t, () => parseBbox(''), 'bbox', /bbox is empty/);
  rejected(t, () => parseBbox('  '), 'bbox', /bbox is empty/);
  t.same(parseBbox('5,47,15,55'), { west: 5, south: 47, east: 15, north: 55 });
  t.same(parseBbox(' -180 , -90 , 180 , 90 '), { west: -180, south: -90, east: 180, north: 90 });
  t.same(
    parseBbox('170,-20,-170,-10'),
    { west: 170, south: -20, east: -170, north: -10 },
    'across the antimeridian',
  );
  t.same(parseBbox('1e1,.5,2.5E1,3.'), { west: 10, south: 0.5, east: 25, north: 3 });
  rejected(t, () => parseBbox('5,47,0,15,55,100'), 'bbox', /3D/);
  rejected(t, () => parseBbox('5,47,15'), 'bbox', /4 numbers/);
  rejected(t, () => parseBbox('5,47,15,55,1'), 'bbox');
  rejected(t, () => parseBbox('a,47,15,55'), 'bbox', /numbers/);
  rejected(t, () => parseBbox('0x10,47,15,55'), 'bbox');
  rejected(t, () => parseBbox('Infinity,47,15,55'), 'bbox');
  rejected(t, () => parseBbox('5,,15,55'), 'bbox');
  rejected(t, () => parseBbox('-181,0,10,10'), 'bbox', /minLon/);
  rejected(t, () => parseBbox('0,0,10,91'), 'bbox', /maxLat/);
  rejected(t, () => parseBbox('0,50,10,40'), 'bbox', /minLat/);
  rejected(t, () => parseBbox(['0,0,1,1', '0,0,2,2']), 'bbox', /once/);
});

t.test('datetime: instants, closed and half-bounded intervals, as half-open ranges', async (t) => {
  t.same(parseDatetime(undefined), { from: null, to: null });
  t.same(
    parseDatetime('2024-05-01T10:00:00Z'),
    { from: '2024-05-01T10:00:00.000Z', to: '2024-05-01T10:00:00.001Z' },
    'an instant: the events at it',
  );
  t.same(
    parseDatetime('2024-05-01'),
    { from: '2024-05-01T00:00:00.000Z', to: '2024-05-02T00:00:00.000Z' },
    'a date: that day',
  );
  t.same(
    parseDatetime('2024-01-01T00:00:00Z/2024-06-30T23:59:59Z'),
    { from: '2024-01-01T00:00:00.000Z', to: '2024-06-30T23:59:59.001Z' },
    'both ends included',
  );
  t.same(parseDatetime('2024-01-01/2024-01-31'), {
    from: '2024-01-01T00:00:00.000Z',
    to: '2024-02-01T00:00:00.000Z',
  });
  t.same(parseDatetime('../2024-01-31T00:00:00Z'), { from: null, to: '2024-01-31T00:00:00.001Z' });
  t.same(parseDatetime('2024-01-31T00:00:00Z/..'), { from: '2024-01-31T00:00:00.000Z', to: null });
  t.same(
    parseDatetime('/2024-01-31T00:00:00Z'),
    { from: null, to: '2024-01-31T00:00:00.001Z' },
    'an empty end is open',
  );
  t.same(parseDatetime('2024-01-31T00:00:00Z/'), { from: '2024-01-31T00:00:00.000Z', to: null });
  t.same(parseDatetime('2024-01-31T02:00:00+02:00'), {
    from: '2024-01-31T00:00:00.000Z',
    to: '2024-01-31T00:00:00.001Z',
  });
  rejected(t, () => parseDatetime('../..'), 'datetime', /at least one end/);
  rejected(t, () => parseDatetime('..'), 'datetime');
  rejected(t, () => parseDatetime('/'), 'datetime');
  rejected(t, () => parseDatetime('a/b/c'), 'datetime');
  rejected(t, () => parseDatetime('yesterday'), 'datetime');
  rejected(t, () => parseDatetime('2024-02-30'), 'datetime');
  rejected(t, () => parseDatetime('2024-06-01/2024-01-01'), 'datetime', /after its end/);
  rejected(t, () => parseDatetime('99999-01-01'), 'datetime');
});

t.test('limit: default, clamped above the maximum, refused below 1', async (t) => {
  t.equal(parseLimit(undefined), OGC_DEFAULT_LIMIT);
  t.equal(parseLimit('7'), 7);
  t.equal(parseLimit(7), 7);
  t.equal(parseLimit(String(OGC_MAX_LIMIT)), OGC_MAX_LIMIT);
  t.equal(parseLimit('1000000'), OGC_MAX_LIMIT, 'the standard lets the server send fewer');
  rejected(t, () => parseLimit('0'), 'limit');
  rejected(t, () => parseLimit('-1'), 'limit');
  rejected(t, () => parseLimit('1.5'), 'limit');
  rejected(t, () => parseLimit('ten'), 'limit');
});

t.test('offset: a multiple of limit, as a page of the read model', async (t) => {
  t.same(parseOffset(undefined, 10), { page: 1, limit: 10 });
  t.same(parseOffset('0', 10), { page: 1, limit: 10 });
  t.same(parseOffset('30', 10), { page: 4, limit: 10 });
  rejected(t, () => parseOffset('15', 10), 'offset', /multiple of limit/);
  rejected(t, () => parseOffset('-10', 10), 'offset');
  t.same(parseOffset(String(MAX_PAGE_OFFSET), 10), { page: MAX_PAGE_OFFSET / 10 + 1, limit: 10 });
  for (const deep of ['2000000', String(MAX_PAGE_OFFSET + 10)]) {
    t.throws(() => parseOffset(deep, 10), {
      field: 'offset',
      code: 'PAGE_TOO_DEEP',
      message:
        /at most 10000 rows deep \(offset=10000 at this limit\): follow the next links, which page by cursor/,
    });
  }
});

t.test('f: json only; html is refused, not redirected', async (t) => {
  checkFormat(undefined);
  checkFormat('json');
  rejected(t, () => checkFormat('html'), 'f', /html is not offered/);
  rejected(t, () => checkFormat('xml'), 'f');
});

t.test("other parts' parameters are named in the 400", async (t) => {
  refuseUnsupportedParameters({ limit: '10', bbox: '0,0,1,1', datetime: '2024-01-01', f: 'json' });
  rejected(t, () => refuseUnsupportedParameters({ crs: 'x' }), 'crs', /crs \(OGC API – Features Part 2/);
  rejected(t, () => refuseUnsupportedParameters({ 'bbox-crs': 'x' }), 'bbox-crs', /Part 2/);
  // Part 3 is implemented (ogc-filter.ts): its parameters pass; two unsupported ones are both named.
  refuseUnsupportedParameters({ filter: 'a=1', 'filter-lang': 'cql2-text', 'filter-crs': 'x' });
  rejected(
    t,
    () => refuseUnsupportedParameters({ limit: '1', sortby: 'id', skipGeometry: 'true' }),
    'sortby',
    /sortby .*skipGeometry/,
  );
  rejected(t, () => refuseUnsupportedParameters({ sortby: '-id' }), 'sortby', /Part 8/);
  rejected(t, () => refuseUnsupportedParameters({ properties: 'a' }), 'properties');
  // A prototype key is not a parameter of the table.
  refuseUnsupportedParameters(
    JSON.parse('{"__proto__": "x", "constructor": "y", "toString": "z"}') as Record<string, unknown>,
  );
});

t.test('feature ids are positive integers', async (t) => {
  t.equal(parseFeatureId('42'), 42);
  t.equal(parseFeatureId('0'), null);
  t.equal(parseFeatureId('042'), null);
  t.equal(parseFeatureId('-1'), null);
  t.equal(parseFeatureId('1e3'), null);
  t.equal(parseFeatureId('99999999999999999'), null, 'beyond the safe integers');
});

t.test('page links: self always, next while more match, prev after the first page', async (t) => {
  const url = 'http://h/ogc/collections/a/items';
  const first = pageLinks(
    url,
    { bbox: '0,0,1,1' },
    { start: { offset: 0 }, limit: 10, returned: 10, matched: 25, after: 'c1' },
  );
  t.same(
    first.map((link) => [link.rel, link.href]),
    [
      ['self', `${url}?bbox=0%2C0%2C1%2C1&limit=10`],
      ['next', `${url}?bbox=0%2C0%2C1%2C1&limit=10&offset=10`],
    ],
  );
  t.ok(first.every((link) => link.type === 'application/geo+json'));
  const last = pageLinks(
    url,
    { datetime: '../2024-01-01' },
    { start: { offset: 20 }, limit: 10, returned: 5, matched: 25, after: null },
  );
  t.same(
    last.map((link) => [link.rel, link.href]),
    [
      ['self', `${url}?datetime=..%2F2024-01-01&limit=10&offset=20`],
      ['prev', `${url}?datetime=..%2F2024-01-01&limit=10&offset=10`],
    ],
  );
  const exact = pageLinks(
    url,
    {},
    { start: { offset: 10 }, limit: 10, returned: 10, matched: 20, after: 'c2' },
  );
  t.same(
    exact.map((link) => link.rel),
    ['self', 'prev'],
    'no next link after the last item',
  );
});

t.test('page links past the depth of offsets: next by cursor, then cursor to cursor', async (t) => {
  const url = 'http://h/ogc/collections/a/items';
  const deepest = pageLinks(
    url,
    {},
    { start: { offset: MAX_PAGE_OFFSET }, limit: 1000, returned: 1000, matched: 50_000, after: 'AbC' },
  );
  t.same(
    deepest.map((link) => [link.rel, link.href]),
    [
      ['self', `${url}?limit=1000&offset=${MAX_PAGE_OFFSET}`],
      ['next', `${url}?limit=1000&cursor=AbC`],
      ['prev', `${url}?limit=1000&offset=${MAX_PAGE_OFFSET - 1000}`],
    ],
  );
  const within = pageLinks(
    url,
    {},
    { start: { offset: MAX_PAGE_OFFSET - 1000 }, limit: 1000, returned: 1000, matched: 50_000, after: 'x' },
  );
  t.match(within.find((link) => link.rel === 'next')?.href, `offset=${MAX_PAGE_OFFSET}`);
  const byCursor = pageLinks(
    url,
    { bbox: '0,0,1,1' },
    { start: { cursor: 'AbC' }, limit: 10, returned: 10, matched: 50_000, after: 'DeF' },
  );
  t.same(
    byCursor.map((link) => [link.rel, link.href]),
    [
      ['self', `${url}?bbox=0%2C0%2C1%2C1&limit=10&cursor=AbC`],
      ['next', `${url}?bbox=0%2C0%2C1%2C1&limit=10&cursor=DeF`],
    ],
    'a cursor page has no prev link (it knows no offset)',
  );
  const lastByCursor = pageLinks(
    url,
    {},
    { start: { cursor: 'AbC' }, limit: 10, returned: 4, matched: 50_000, after: null },
  );
  t.same(
    lastByCursor.map((link) => link.rel),
    ['self'],
  );
});

t.test('collection ids are dataset slugs', async (t) => {
  t.ok(isCollectionId('usgs-earthquakes'));
  t.ok(isCollectionId('a1'));
  t.ok(isCollectionId('a'.repeat(128)));
  // 129 to 200 characters named a collection before; no slug is that long (domain/collections/slugs.ts).
  for (const id of ['', 'Fires', 'a_b', '-a', 'a-', 'a--b', 'a\u0000b', 'a'.repeat(129), 'a'.repeat(201)]) {
    t.notOk(isCollectionId(id), JSON.stringify(id.slice(0, 12)));
  }
});
