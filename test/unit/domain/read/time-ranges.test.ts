import t from 'tap';
import {
  ceilPeriod,
  floorPeriod,
  nextPeriod,
  periodStarts,
  splitRange,
} from '../../../../src/domain/read/time-ranges.ts';

t.test('an open range is all periods of the coarsest grain', async (t) => {
  t.same(splitRange({ from: null, to: null }, ['year', 'month', 'day']), {
    periods: [{ grain: 'year', from: null, to: null }],
    rest: [],
  });
});

t.test('a range is whole years, whole months, whole days and the rows at both ends', async (t) => {
  const split = splitRange({ from: '2019-11-20T10:00:00.000Z', to: '2022-02-03T06:00:00.000Z' }, [
    'year',
    'month',
    'day',
  ]);
  t.same(split.periods, [
    { grain: 'year', from: '2020-01-01T00:00:00.000Z', to: '2022-01-01T00:00:00.000Z' },
    { grain: 'month', from: '2019-12-01T00:00:00.000Z', to: '2020-01-01T00:00:00.000Z' },
    { grain: 'day', from: '2019-11-21T00:00:00.000Z', to: '2019-12-01T00:00:00.000Z' },
    { grain: 'month', from: '2022-01-01T00:00:00.000Z', to: '2022-02-01T00:00:00.000Z' },
    { grain: 'day', from: '2022-02-01T00:00:00.000Z', to: '2022-02-03T00:00:00.000Z' },
  ]);
  t.same(split.rest, [
    { from: '2019-11-20T10:00:00.000Z', to: '2019-11-21T00:00:00.000Z' },
    { from: '2022-02-03T00:00:00.000Z', to: '2022-02-03T06:00:00.000Z' },
  ]);
});

t.test('half-open ends and ranges inside one day', async (t) => {
  t.same(splitRange({ from: '2021-03-01T00:00:00.000Z', to: null }, ['year', 'month']), {
    periods: [
      { grain: 'year', from: '2022-01-01T00:00:00.000Z', to: null },
      { grain: 'month', from: '2021-03-01T00:00:00.000Z', to: '2022-01-01T00:00:00.000Z' },
    ],
    rest: [],
  });
  t.same(
    splitRange({ from: '2021-03-05T01:00:00.000Z', to: '2021-03-05T02:00:00.000Z' }, [
      'year',
      'month',
      'day',
    ]),
    {
      periods: [],
      rest: [{ from: '2021-03-05T01:00:00.000Z', to: '2021-03-05T02:00:00.000Z' }],
    },
  );
  t.same(splitRange({ from: null, to: '2021-03-05T02:00:00.000Z' }, ['day']), {
    periods: [{ grain: 'day', from: null, to: '2021-03-05T00:00:00.000Z' }],
    rest: [{ from: '2021-03-05T00:00:00.000Z', to: '2021-03-05T02:00:00.000Z' }],
  });
});

t.test('period arithmetic in UTC', async (t) => {
  t.equal(floorPeriod('2024-02-29T23:59:59.999Z', 'month'), '2024-02-01T00:00:00.000Z');
  t.equal(ceilPeriod('2024-02-01T00:00:00.000Z', 'month'), '2024-02-01T00:00:00.000Z');
  t.equal(ceilPeriod('2024-02-01T00:00:00.001Z', 'month'), '2024-03-01T00:00:00.000Z');
  t.equal(nextPeriod('2024-12-31T00:00:00.000Z', 'day'), '2025-01-01T00:00:00.000Z');
  t.equal(nextPeriod('2024-12-01T00:00:00.000Z', 'month'), '2025-01-01T00:00:00.000Z');
  t.equal(floorPeriod('2024-07-04T12:00:00.000Z', 'year'), '2024-01-01T00:00:00.000Z');
});

t.test(
  'periods read from the text are those of the Date arithmetic, and other years still work',
  async (t) => {
    // The Date arithmetic the text shortcut replaced, for the instants toISOString writes.
    const byDate = (iso: string, grain: 'year' | 'month' | 'day'): string => {
      const date = new Date(iso);
      const year = date.getUTCFullYear();
      if (grain === 'year') return new Date(Date.UTC(year, 0, 1)).toISOString();
      if (grain === 'month') return new Date(Date.UTC(year, date.getUTCMonth(), 1)).toISOString();
      return new Date(Date.UTC(year, date.getUTCMonth(), date.getUTCDate())).toISOString();
    };
    const instants = [
      '2024-02-29T23:59:59.999Z',
      '2024-12-31T23:59:59.999Z',
      '2025-01-01T00:00:00.000Z',
      '1000-01-01T00:00:00.001Z',
      '9999-12-31T12:00:00.000Z',
    ];
    // A deterministic spread over the years 1000-9999, some on period starts.
    for (let i = 0; i < 500; i += 1) {
      const millis =
        Date.UTC(1000, 0, 1) + ((i * 7_919_113_337_777) % (Date.UTC(9999, 0, 1) - Date.UTC(1000, 0, 1)));
      const date = new Date(millis);
      instants.push(date.toISOString());
      instants.push(new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1)).toISOString());
    }
    for (const iso of instants) {
      for (const grain of ['year', 'month', 'day'] as const) {
        const floor = byDate(iso, grain);
        t.equal(floorPeriod(iso, grain), floor, `floor ${grain} of ${iso}`);
        const ceiling = floor === iso ? floor : nextPeriod(floor, grain);
        t.equal(ceilPeriod(iso, grain), ceiling, `ceiling ${grain} of ${iso}`);
      }
    }
    // Years outside 1000-9999 (an end date of 9999-12-31 with a negative offset) take the Date path.
    t.equal(floorPeriod('+010000-01-01T04:00:00.000Z', 'month'), '+010000-01-01T00:00:00.000Z');
    t.equal(ceilPeriod('+010000-01-01T04:00:00.000Z', 'day'), '+010000-01-02T00:00:00.000Z');
    t.equal(ceilPeriod('0999-12-31T00:00:00.000Z', 'year'), '1000-01-01T00:00:00.000Z');
  },
);

t.test('periodStarts lists the periods of a closed span, none past a cap or for an open end', (t) => {
  const span = { grain: 'month' as const, from: '2023-11-01T00:00:00.000Z', to: '2024-03-01T00:00:00.000Z' };
  t.same(periodStarts(span, 240), [
    '2023-11-01T00:00:00.000Z',
    '2023-12-01T00:00:00.000Z',
    '2024-01-01T00:00:00.000Z',
    '2024-02-01T00:00:00.000Z',
  ]);
  t.same(periodStarts(span, 4)?.length, 4, 'exactly the cap: listed');
  t.equal(periodStarts(span, 3), null, 'past the cap: a range instead');
  t.equal(periodStarts({ ...span, from: null }, 240), null, 'open: a range');
  t.same(
    periodStarts({ grain: 'year', from: '2016-01-01T00:00:00.000Z', to: '2018-01-01T00:00:00.000Z' }, 240),
    ['2016-01-01T00:00:00.000Z', '2017-01-01T00:00:00.000Z'],
  );
  t.end();
});
