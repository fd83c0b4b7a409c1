import t from 'tap';
import { canReadView, canWriteView } from '../../../../src/domain/access.ts';
import {
  exploreQuery,
  frameAncestors,
  parseEmbedOrigins,
  parseViewChanges,
  parseViewFields,
  parseViewState,
  VIEW_CODE_PATTERN,
  viewCodeFrom,
} from '../../../../src/domain/site/saved-views.ts';

// The Explore page's own reader of its URL (browser code, imported as the page runs it).
const { readState, writeState } = (await import(
  new URL('../../../../web/explore/state.js', import.meta.url).href
)) as {
  readState: (search: string) => Record<string, unknown>;
  writeState: (state: Record<string, unknown>) => string;
};

t.test('a view state is checked part by part; what is left out takes the default', async (t) => {
  t.same(parseViewState({}), {
    lng: 0,
    lat: 0,
    zoom: 1,
    catalog: '',
    datasets: [],
    startDate: '',
    endDate: '',
    mode: 'auto',
  });
  const state = parseViewState({
    lng: 139.69,
    lat: 35.68,
    zoom: 9.5,
    catalog: 'city-events',
    datasets: ['quakes', 'quakes', 'fires'],
    startDate: '2024-01-01',
    endDate: '2024-12-31T23:59:59.999Z',
    mode: 'tiles',
  });
  t.same(state.datasets, ['quakes', 'fires'], 'a dataset named twice counts once');
  for (const [bad, field] of [
    [{ lng: 181 }, 'state.lng'],
    [{ lat: '35' }, 'state.lat'],
    [{ zoom: Number.NaN }, 'state.zoom'],
    [{ catalog: 'Not A Slug' }, 'state.catalog'],
    [{ datasets: 'quakes' }, 'state.datasets'],
    [{ datasets: Array.from({ length: 51 }, (_, i) => `d${i}`) }, 'state.datasets'],
    [{ datasets: [{ $ne: 1 }] }, 'state.datasets'],
    [{ startDate: '2024-13-45' }, 'state.startDate'],
    [{ startDate: "2024-01-01'; drop table" }, 'state.startDate'],
    [{ startDate: '2024-02-01', endDate: '2024-01-01' }, 'state.startDate'],
    [{ mode: 'satellite' }, 'state.mode'],
  ] as const) {
    t.throws(() => parseViewState(bad), { name: 'ValidationError', field }, JSON.stringify(bad));
  }
  t.throws(() => parseViewState([]), { name: 'ValidationError', field: 'state' });
});

t.test('the Explore page reads back the state a view sends it to', async (t) => {
  const state = parseViewState({
    lng: -122.4194,
    lat: 37.7749,
    zoom: 11.25,
    catalog: 'city-events',
    datasets: ['quakes', 'fires'],
    startDate: '2024-01-01',
    endDate: '2024-06-30',
    mode: 'markers',
  });
  const read = readState(exploreQuery(state));
  t.same({ ...read, page: undefined }, { ...state, page: undefined });
  t.equal(exploreQuery(state), writeState({ ...state, page: 1 }), "the page's own writer says the same");
});

t.test('embed origins: exactly origins of http(s), nothing that could widen the policy', async (t) => {
  t.same(
    parseEmbedOrigins(['https://news.example.org/', 'http://localhost:8080', 'https://news.example.org']),
    ['https://news.example.org', 'http://localhost:8080'],
  );
  for (const bad of [
    '*',
    'https://*.example.org',
    'https://example.org/path',
    'https://user:pw@example.org',
    'javascript:alert(1)',
    "https://example.org 'unsafe-inline'",
    'https://example.org;script-src *',
    'data:',
    'example.org',
    42,
  ]) {
    t.throws(() => parseEmbedOrigins([bad]), { name: 'ValidationError', field: 'embedOrigins' }, String(bad));
  }
  t.throws(() => parseEmbedOrigins(Array.from({ length: 21 }, (_, i) => `https://s${i}.example.org`)));
  t.equal(frameAncestors([]), "'none'", 'no list: no framing');
  t.equal(
    frameAncestors(['https://a.example', 'http://b.example:81']),
    'https://a.example http://b.example:81',
  );
});

t.test('fields and changes', async (t) => {
  const fields = parseViewFields({ title: '  Tokyo quakes ', isPublic: true });
  t.equal(fields.title, 'Tokyo quakes');
  t.equal(fields.isPublic, true);
  t.same(fields.embedOrigins, []);
  t.throws(() => parseViewFields({ title: '   ' }), { name: 'ValidationError', field: 'title' });
  t.throws(() => parseViewFields({ title: 'x'.repeat(201) }), { name: 'ValidationError', field: 'title' });
  t.throws(() => parseViewFields({ title: 'x', isPublic: 'yes' }), {
    name: 'ValidationError',
    field: 'isPublic',
  });
  t.same(parseViewChanges({ isPublic: false }), { isPublic: false }, 'only what was sent');
  t.same(parseViewChanges({}), {});
  t.throws(() => parseViewChanges({ description: 'x'.repeat(2001) }), {
    name: 'ValidationError',
    field: 'description',
  });
});

t.test('view codes: ten characters of the alphabet, unbiased bytes only', async (t) => {
  const bytes = Uint8Array.from({ length: 32 }, (_, i) => (i * 37) % 248);
  const code = viewCodeFrom(bytes);
  t.ok(code && VIEW_CODE_PATTERN.test(code), String(code));
  t.equal(viewCodeFrom(new Uint8Array(32).fill(250)), null, 'bytes past 247 are skipped');
  t.equal(viewCodeFrom(Uint8Array.from([0, 61, 62, 247, 1, 2, 3, 4, 5, 6])), 'A9A9BCDEFG');
});

t.test('who may open and change a view', async (t) => {
  const owner = { id: 1, email: 'o@example.org', role: 'user', trustLevel: 1 } as const;
  const other = { id: 2, email: 's@example.org', role: 'user', trustLevel: 1 } as const;
  const admin = { id: 3, email: 'a@example.org', role: 'admin', trustLevel: 1 } as const;
  const privateView = { ownerId: 1, isPublic: false };
  const publicView = { ownerId: 1, isPublic: true };
  t.same(
    [null, other, owner, admin].map((viewer) => canReadView(viewer, privateView)),
    [false, false, true, true],
  );
  t.same(
    [null, other, owner, admin].map((viewer) => canReadView(viewer, publicView)),
    [true, true, true, true],
  );
  t.same(
    [null, other, owner, admin].map((viewer) => canWriteView(viewer, publicView)),
    [false, false, true, true],
  );
});
