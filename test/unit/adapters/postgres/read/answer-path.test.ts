import t from 'tap';
import {
  countAnswer,
  extentAnswer,
  coversMostOfWorld,
  GENERIC_PAGE_MIN_SHARE,
  histogramGrain,
  pageAnswer,
  readsAllTimeCells,
  readsCoarseCells,
  readsDayCells,
  readsFineCells,
  readsYearCells,
  type ScopeFacts,
  scopeFacts,
  timeRangeAnswer,
} from '../../../../../src/adapters/postgres/read/answer-path.ts';
import type { DateField, EventFilter, Sort } from '../../../../../src/domain/read/read-query.ts';

// The answer-path policy: which precomputed counts (or plan) answer a view. Every branch is named
// by the view that takes it.

const everything: ScopeFacts = {
  allDatasets: true,
  wholeCatalog: false,
  countsPending: false,
  fineCells: true,
  dayCells: true,
  largeShare: true,
};
const someDatasets: ScopeFacts = {
  allDatasets: false,
  wholeCatalog: false,
  countsPending: false,
  fineCells: false,
  dayCells: false,
  largeShare: false,
};
const pending: ScopeFacts = { ...everything, countsPending: true, fineCells: false, largeShare: false };
const wholeCatalog: ScopeFacts = { ...someDatasets, wholeCatalog: true };

/** The level-10-cells answer: years and months, nothing else unless said. */
function cells(
  overrides: Partial<Record<'dayCells' | 'cutMonths' | 'allTime' | 'coarse', boolean>> & {
    grains?: string[];
  } = {},
) {
  return {
    kind: 'level-10-cells',
    grains: ['year', 'month'],
    dayCells: false,
    cutMonths: false,
    allTime: false,
    coarse: false,
    ...overrides,
  };
}

const PARIS = { north: 48.9, south: 48.8, east: 2.4, west: 2.3 }; // a city at zoom 12
const EUROPE = { north: 55, south: 47, east: 15, west: 5 }; // a country or two at zoom 5
const WORLD = { north: 80, south: -80, east: 170, west: -170 }; // the Explore page's first view

function view(overrides: Partial<EventFilter> = {}): EventFilter {
  return {
    catalog: null,
    datasets: [],
    bounds: null,
    dates: { from: null, to: null },
    dateField: { kind: 'eventTimestamp' },
    ...overrides,
  };
}
const customDate: DateField = { kind: 'data', path: ['startDate'] };
const someDates = { from: '2020-01-15T10:00:00.000Z', to: '2021-03-02T00:00:00.000Z' };

const byTime: Sort = { key: { field: 'eventTimestamp' }, descending: true, text: '-eventTimestamp' };
const byId: Sort = { key: { field: 'id' }, descending: false, text: 'id' };
const byData: Sort = { key: { field: 'data', path: ['x'] }, descending: false, text: 'data.x' };

t.test('scope facts: the table statistics and the scope row decide what the counts may answer', async (t) => {
  const unfiltered = { catalog: null, datasets: [] };
  const catalog = { catalog: 'culture', datasets: [] };
  const row = { hidden: 0, catalogId: 1, pending: false, share: 1 };
  t.same(scopeFacts(row, unfiltered), {
    allDatasets: true,
    wholeCatalog: false,
    fineCells: true,
    dayCells: true,
    countsPending: false,
    largeShare: true,
  });
  t.same(
    scopeFacts({ ...row, pending: true }, unfiltered),
    {
      allDatasets: true,
      wholeCatalog: false,
      fineCells: false,
      dayCells: true,
      countsPending: true,
      largeShare: false,
    },
    'pending counts: no count table, no generic plan',
  );
  t.same(
    scopeFacts({ ...row, hidden: 1 }, unfiltered),
    {
      allDatasets: false,
      wholeCatalog: false,
      fineCells: false,
      dayCells: false,
      countsPending: false,
      largeShare: false,
    },
    'something hidden from the viewer: the visible datasets one by one',
  );
  const large = scopeFacts({ ...row, share: GENERIC_PAGE_MIN_SHARE }, catalog);
  t.equal(large.wholeCatalog, true);
  t.equal(large.largeShare, true, 'a large whole catalog: the generic plan');
  t.equal(scopeFacts({ ...row, share: 0.05 }, catalog).largeShare, false, 'a small catalog: custom plans');
  t.equal(scopeFacts({ ...row, hidden: 1 }, catalog).wholeCatalog, false, 'part of a catalog hidden');
  t.equal(scopeFacts(row, { catalog: 'culture', datasets: ['a'] }).wholeCatalog, false, 'datasets named');
  t.equal(scopeFacts({ ...row, catalogId: null }, catalog).wholeCatalog, false, 'an unknown catalog');
});

t.test('counts without bounds: whole periods from event_counts, unless only rows will do', async (t) => {
  t.same(countAnswer(everything, view()), { kind: 'period-counts', grains: ['year', 'month', 'day'] });
  t.same(countAnswer(someDatasets, view({ dates: someDates })), {
    kind: 'period-counts',
    grains: ['year', 'month', 'day'],
  });
  t.same(countAnswer(everything, view(), { histogram: 'month' }), {
    kind: 'period-counts',
    grains: ['month', 'day'],
  });
  t.same(countAnswer(everything, view(), { histogram: 'day' }), { kind: 'period-counts', grains: ['day'] });
  t.same(countAnswer(everything, view(), { level: 8 }), { kind: 'rows' }, 'map cells need bounds');
  t.same(countAnswer(pending, view()), { kind: 'rows' }, 'counts pending');
  t.same(countAnswer(everything, view({ dateField: customDate })), { kind: 'rows' }, 'a custom date field');
  t.same(countAnswer(everything, view(), { histogram: null }), { kind: 'rows' }, 'bins of part days');
});

t.test('counts of most of the world: everything minus the events outside the box', async (t) => {
  t.equal(coversMostOfWorld(WORLD), true);
  t.equal(coversMostOfWorld(EUROPE), false);
  t.equal(coversMostOfWorld(null), false);
  t.same(countAnswer(everything, view({ bounds: WORLD })), { kind: 'world-minus-outside' });
  t.same(countAnswer(someDatasets, view({ bounds: WORLD }), { histogram: 'day', cutMonths: true }), {
    kind: 'world-minus-outside',
  });
  t.same(
    countAnswer(everything, view({ bounds: WORLD }), { level: 2 }),
    cells({ dayCells: true, allTime: true, coarse: true }),
    'map cells: the cells, as for any box',
  );
});

t.test('counts in a box: the level-10 cells inside, the day cells for unfiltered views', async (t) => {
  const box = view({ bounds: EUROPE });
  t.same(countAnswer(everything, box), cells({ dayCells: true, allTime: true }));
  t.same(
    countAnswer(everything, view({ bounds: EUROPE, dates: someDates }), { perDataset: true }),
    cells({ grains: ['month'] }),
    'the day cells hold the totals only, the year cells too',
  );
  t.same(countAnswer(someDatasets, box, { level: 6 }), cells({ grains: ['month'], allTime: true }));
  t.same(countAnswer(everything, box, { histogram: 'month' }), cells({ grains: ['month'], dayCells: true }));
  t.same(
    countAnswer(everything, box, { histogram: 'day', cutMonths: true }),
    cells({ grains: ['month'], dayCells: true, cutMonths: true }),
  );
  t.same(
    countAnswer(someDatasets, box, { histogram: 'day', cutMonths: true }),
    { kind: 'rows' },
    'day bins of some datasets: no day cells for them',
  );
  t.same(countAnswer(everything, box, { histogram: 'day' }), { kind: 'rows' }, 'cut months unknown');
  t.same(countAnswer(pending, box), { kind: 'rows' });
});

t.test('undated boxes, whatever the scope: the all-time cells', async (t) => {
  const box = view({ bounds: EUROPE });
  t.equal(readsAllTimeCells(box), true, 'undated');
  t.equal(readsAllTimeCells(view({ bounds: EUROPE, dates: someDates })), false, 'a date range');
  t.equal(
    readsAllTimeCells(view({ bounds: EUROPE, dates: { from: someDates.from, to: null } })),
    false,
    'from a date on',
  );
  t.same(countAnswer(someDatasets, box), cells({ grains: ['month'], allTime: true }), 'datasets: their own');
  t.same(
    countAnswer(everything, box, { perDataset: true }),
    cells({ grains: ['month'], allTime: true }),
    "a breakdown by dataset: the datasets' all-time cells",
  );
  const catalogCells = countAnswer(wholeCatalog, box, { level: 6 });
  t.same(catalogCells, cells({ grains: ['month'], allTime: true, coarse: true }));
  t.same(
    countAnswer(everything, view({ bounds: EUROPE, dates: someDates }), { level: 6 }),
    cells({ dayCells: true, coarse: true }),
    'dated: years and months',
  );
});

t.test('whole years in a box: the year cells of the totals only, other scopes sum months', async (t) => {
  t.equal(readsYearCells(everything, false), true, 'everything');
  t.equal(readsYearCells(everything, true), false, 'a breakdown by dataset: the datasets have no year cells');
  t.equal(readsYearCells(wholeCatalog, false), false, "a whole catalog: its datasets' months");
  t.equal(readsYearCells(someDatasets, false), false, 'datasets: their months');
  const dated = view({ bounds: EUROPE, dates: someDates });
  t.same(countAnswer(wholeCatalog, dated, { level: 6 }), cells({ grains: ['month'], coarse: true }));
  t.same(countAnswer(someDatasets, dated), cells({ grains: ['month'] }));
});

t.test('map cells at zoom 0-4 of everything or a whole catalog: the level-6 cells inside', async (t) => {
  t.equal(readsCoarseCells(everything, 2, false), true, 'zoom 0');
  t.equal(readsCoarseCells(everything, 6, false), true, 'zoom 4: the level-6 cells are the clusters');
  t.equal(readsCoarseCells(everything, 7, false), false, 'finer than level 6: they do not nest');
  t.equal(readsCoarseCells(wholeCatalog, 4, false), true, 'a whole catalog');
  t.equal(readsCoarseCells(someDatasets, 4, false), false, 'datasets: not kept per dataset');
  t.equal(readsCoarseCells(everything, 4, true), false, 'a breakdown by dataset');
  t.equal(readsCoarseCells(everything, null, false), false, 'a count without cells');
  t.equal(countAnswer(everything, view({ bounds: EUROPE }), { level: 8 }).kind, 'level-10-cells');
});

t.test('map cells finer than level 10: the level-16 cells for unfiltered views, else rows', async (t) => {
  const city = view({ bounds: PARIS });
  t.same(countAnswer(everything, city, { level: 12 }), { kind: 'level-16-cells', level: 12 });
  t.same(countAnswer(everything, city, { level: 16 }), { kind: 'level-16-cells', level: 16 });
  t.same(countAnswer(everything, city, { level: 10 }), cells({ dayCells: true, allTime: true }));
  t.same(countAnswer(someDatasets, city, { level: 12 }), { kind: 'rows' }, 'datasets: not in the table');
  t.same(
    countAnswer({ ...everything, fineCells: false }, city, { level: 12 }),
    { kind: 'rows' },
    'the table does not pay',
  );
  t.same(countAnswer(everything, view({ bounds: PARIS, dates: someDates }), { level: 12 }), { kind: 'rows' });
  t.equal(readsFineCells(everything, city, 12), true);
  t.equal(readsFineCells(everything, city, 17), false, 'beyond level 16');
  t.equal(readsFineCells(everything, city, 10), false, 'the level-10 counts answer');
  t.equal(readsFineCells(everything, view(), 12), false, 'no bounds');
  t.equal(readsFineCells(everything, view({ bounds: PARIS, dateField: customDate }), 12), false);
  t.equal(readsDayCells(everything, false), true);
  t.equal(readsDayCells(someDatasets, false), false);
  // The day cells draining or off (migration 0970): every answer that read them reads the rows of
  // those days instead, or the month cells.
  const noDayCells: ScopeFacts = { ...everything, dayCells: false };
  const box = view({ bounds: EUROPE });
  t.equal(readsDayCells(noDayCells, false), false);
  t.same(countAnswer(noDayCells, box), cells({ allTime: true }));
  t.same(
    countAnswer(noDayCells, box, { histogram: 'day', cutMonths: true }),
    { kind: 'rows' },
    'day bins cutting months: the rows',
  );
  t.same(timeRangeAnswer(noDayCells, view({ bounds: EUROPE })), { kind: 'box-cell-periods', grain: 'month' });
});

t.test('histogram bins: period counts only when every bin is whole periods', async (t) => {
  t.equal(histogramGrain({ kind: 'calendar', granularity: 'month' }), 'month');
  t.equal(histogramGrain({ kind: 'calendar', granularity: 'week' }), 'day');
  t.equal(histogramGrain({ kind: 'fixed', originSeconds: 0, sizeSeconds: 7 * 86_400 }), 'day');
  t.equal(histogramGrain({ kind: 'fixed', originSeconds: 3600, sizeSeconds: 86_400 }), null, 'offset origin');
  t.equal(histogramGrain({ kind: 'fixed', originSeconds: 0, sizeSeconds: 7200 }), null, 'part days');
});

t.test('time range: day counts, the box cells, or the rows', async (t) => {
  t.same(timeRangeAnswer(everything, view()), { kind: 'day-counts' });
  t.same(timeRangeAnswer(everything, view({ bounds: EUROPE })), { kind: 'box-cell-periods', grain: 'day' });
  t.same(timeRangeAnswer(someDatasets, view({ bounds: EUROPE })), {
    kind: 'box-cell-periods',
    grain: 'month',
  });
  t.same(timeRangeAnswer(everything, view({ bounds: WORLD })), { kind: 'rows' }, 'the rows in time order');
  t.same(timeRangeAnswer(everything, view({ dateField: customDate })), { kind: 'rows' });
  t.same(timeRangeAnswer(pending, view()), { kind: 'rows' });
});

t.test('the /events page: box rows, one statement (generic plan or not), or page beside total', async (t) => {
  t.same(pageAnswer(everything, view(), byTime), { kind: 'one-statement', genericPlan: true });
  t.same(pageAnswer(everything, view(), byId), { kind: 'one-statement', genericPlan: false }, 'id order');
  t.same(pageAnswer(someDatasets, view(), byTime), { kind: 'one-statement', genericPlan: false });
  t.same(pageAnswer(everything, view({ bounds: PARIS }), byTime), { kind: 'box-rows' }, 'a city');
  t.same(
    pageAnswer(everything, view({ bounds: PARIS }), byData),
    { kind: 'page-beside-total' },
    'not indexed',
  );
  t.same(pageAnswer(everything, view({ bounds: EUROPE }), byTime), { kind: 'page-beside-total' });
  t.same(pageAnswer(everything, view({ dateField: customDate }), byTime), { kind: 'page-beside-total' });
  t.same(pageAnswer(everything, view({ bounds: PARIS, dateField: customDate }), byTime), {
    kind: 'page-beside-total',
  });
});

t.test(
  'extent: the spatial index from the edges for large scopes without bounds or dates, else rows',
  async (t) => {
    t.same(extentAnswer(everything, view()), { kind: 'nearest-to-edges' });
    t.same(
      extentAnswer({ ...someDatasets, largeShare: true }, view()),
      { kind: 'nearest-to-edges' },
      'a large catalog',
    );
    t.same(extentAnswer(someDatasets, view()), { kind: 'rows' }, 'datasets or a small catalog: their rows');
    t.same(extentAnswer(everything, view({ bounds: EUROPE })), { kind: 'rows' }, 'a box');
    t.same(extentAnswer(everything, view({ dates: someDates })), { kind: 'rows' }, 'a date range');
    t.same(extentAnswer(pending, view()), { kind: 'rows' }, 'counts pending or generalised locations');
  },
);
