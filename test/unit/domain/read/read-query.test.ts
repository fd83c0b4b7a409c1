import t from 'tap';
import { rejected } from '../../../helpers/validation.ts';
import {
  longitudeRanges,
  paginate,
  parseBounds,
  parseDate,
  parseEventFilter,
  parseGroupBy,
  parsePage,
  parseZoom,
} from '../../../../src/domain/read/read-query.ts';
import { parseEventSort } from '../../../../src/domain/read/sort.ts';

t.test('an empty query is no filter', async (t) => {
  t.same(parseEventFilter({}), {
    catalog: null,
    datasets: [],
    bounds: null,
    dates: { from: null, to: null },
    dateField: { kind: 'eventTimestamp' },
  });
});

t.test('datasets: repeated, comma separated, deduplicated; slugs only', async (t) => {
  t.same(parseEventFilter({ datasets: ['a', 'b-c'] }).datasets, ['a', 'b-c']);
  t.same(parseEventFilter({ datasets: 'a,b,a' }).datasets, ['a', 'b']);
  rejected(t, () => parseEventFilter({ datasets: ['ok', 'Not A Slug'] }), 'datasets');
  rejected(t, () => parseEventFilter({ catalog: 'x y' }), 'catalog');
  // The one slug rule (domain/collections/slugs.ts), length included: before, any length passed.
  t.equal(parseEventFilter({ catalog: 'a'.repeat(128) }).catalog, 'a'.repeat(128));
  rejected(t, () => parseEventFilter({ catalog: 'a'.repeat(129) }), 'catalog');
  rejected(t, () => parseEventFilter({ datasets: ['a'.repeat(129)] }), 'datasets');
});

t.test('bounds', async (t) => {
  t.same(parseBounds('{"north":55,"south":47,"east":15,"west":5}'), {
    north: 55,
    south: 47,
    east: 15,
    west: 5,
  });
  rejected(t, () => parseBounds('{"north":55,'), 'bounds');
  rejected(t, () => parseBounds('[1,2,3,4]'), 'bounds');
  rejected(t, () => parseBounds('{"north":"55","south":47,"east":15,"west":5}'), 'bounds');
  rejected(t, () => parseBounds('{"north":40,"south":47,"east":15,"west":5}'), 'bounds');
  rejected(t, () => parseBounds('{"north":91,"south":47,"east":15,"west":5}'), 'bounds');
  rejected(t, () => parseBounds('{"north":50,"south":-90.5,"east":15,"west":5}'), 'bounds');
  rejected(t, () => parseBounds('{"north":50,"south":40,"east":181,"west":5}'), 'bounds');
  rejected(t, () => parseEventFilter({}, { boundsRequired: true }), 'bounds');
});

t.test('bounds crossing the antimeridian split into two longitude ranges', async (t) => {
  const crossing = parseBounds('{"north":10,"south":-10,"east":-170,"west":170}');
  t.ok(crossing);
  if (!crossing) return;
  t.same(longitudeRanges(crossing), [
    { west: 170, east: 180 },
    { west: -180, east: -170 },
  ]);
  t.same(longitudeRanges({ north: 1, south: 0, east: 10, west: 5 }), [{ west: 5, east: 10 }]);
});

t.test('dates: start inclusive, end inclusive, a bare end date covers its whole day', async (t) => {
  t.equal(parseDate('2024-05-01', 'startDate', 'start'), '2024-05-01T00:00:00.000Z');
  t.equal(parseDate('2024-05-31', 'endDate', 'end'), '2024-06-01T00:00:00.000Z');
  t.equal(parseDate('2024-05-31T12:00:00Z', 'endDate', 'end'), '2024-05-31T12:00:00.001Z');
  // The documented range ends with 9999: its last day is accepted, as no end (issue 30 §7).
  t.equal(parseDate('9999-12-31', 'endDate', 'end'), null);
  t.equal(parseDate('9999-12-31T23:59:59.999Z', 'endDate', 'end'), null);
  t.equal(parseDate('9999-12-31T23:59:59.998Z', 'endDate', 'end'), '9999-12-31T23:59:59.999Z');
  t.equal(parseDate('2024-05-31T14:00:00+02:00', 'startDate', 'start'), '2024-05-31T12:00:00.000Z');
  t.equal(
    parseDate('2024-05-31T12:00', 'startDate', 'start'),
    '2024-05-31T12:00:00.000Z',
    'no zone means UTC',
  );
  rejected(t, () => parseDate('yesterday', 'startDate', 'start'), 'startDate');
  rejected(t, () => parseDate('2024-02-30', 'endDate', 'end'), 'endDate');
  rejected(t, () => parseDate('2024-13-01', 'startDate', 'start'), 'startDate');
  rejected(t, () => parseEventFilter({ startDate: '2024-06-01', endDate: '2024-05-01' }), 'startDate');
});

t.test('dateField: eventTimestamp or data.<field>', async (t) => {
  t.same(parseEventFilter({ dateField: 'data.startDate' }).dateField, { kind: 'data', path: ['startDate'] });
  t.same(parseEventFilter({ dateField: 'eventTimestamp' }).dateField, { kind: 'eventTimestamp' });
  rejected(t, () => parseEventFilter({ dateField: 'createdAt' }), 'dateField');
  rejected(t, () => parseEventFilter({ dateField: "data.x'; drop table events" }), 'dateField');
});

t.test('page and limit', async (t) => {
  t.same(parsePage({}), { page: 1, limit: 100 });
  t.same(parsePage({ page: '3', limit: '1000' }), { page: 3, limit: 1000 });
  rejected(t, () => parsePage({ limit: '0' }), 'limit');
  rejected(t, () => parsePage({ limit: '1001' }), 'limit');
  rejected(t, () => parsePage({ limit: '10.5' }), 'limit');
  rejected(t, () => parsePage({ page: '0' }), 'page');
});

t.test('zoom 0 to 22, default 10', async (t) => {
  t.equal(parseZoom(undefined), 10);
  t.equal(parseZoom('0'), 0);
  t.equal(parseZoom(22), 22);
  rejected(t, () => parseZoom('-1'), 'zoom');
  rejected(t, () => parseZoom('30'), 'zoom');
});

t.test('groupBy', async (t) => {
  t.equal(parseGroupBy('catalog'), 'catalog');
  t.equal(parseGroupBy('dataset'), 'dataset');
  rejected(t, () => parseGroupBy('country'), 'groupBy');
  rejected(t, () => parseGroupBy(undefined), 'groupBy');
});

t.test('sort: default -eventTimestamp, top-level fields and data.<field>', async (t) => {
  t.same(parseEventSort(undefined), {
    key: { field: 'eventTimestamp' },
    descending: true,
    text: '-eventTimestamp',
  });
  t.same(parseEventSort('id').key, { field: 'id' });
  t.same(parseEventSort('-data.mag'), {
    key: { field: 'data', path: ['mag'] },
    descending: true,
    text: '-data.mag',
  });
  t.same(parseEventSort('data.address.city').key, { field: 'data', path: ['address', 'city'] });
  rejected(t, () => parseEventSort('password'), 'sort');
  rejected(t, () => parseEventSort('data.'), 'sort');
});

t.test('pagination object', async (t) => {
  t.same(paginate({ page: 1, limit: 100 }, 250), {
    page: 1,
    limit: 100,
    totalDocs: 250,
    totalPages: 3,
    hasNextPage: true,
    hasPrevPage: false,
    nextPage: 2,
    prevPage: null,
  });
  t.same(paginate({ page: 3, limit: 100 }, 250), {
    page: 3,
    limit: 100,
    totalDocs: 250,
    totalPages: 3,
    hasNextPage: false,
    hasPrevPage: true,
    nextPage: null,
    prevPage: 2,
  });
  t.equal(paginate({ page: 1, limit: 10 }, 0).totalPages, 0);
  t.equal(paginate({ page: 1, limit: 10 }, 0).hasNextPage, false);
});
