import t from 'tap';
import {
  cellBounds,
  cellRangeBounds,
  clusterLevel,
  gridRange,
  INDIVIDUAL_ZOOM,
  innerCellRange,
  mercatorCell,
  mercatorShare,
} from '../../../../src/domain/read/clustering.ts';

// The width of a Web Mercator cell of a level, in metres, at a latitude: what the spec's "clusters of
// roughly 100 to 1000 m" measures clusterLevel's levels by.
const EARTH_CIRCUMFERENCE_M = 40_075_016.686;
const cellSizeMetres = (level: number, latitude = 0) =>
  (EARTH_CIRCUMFERENCE_M / 2 ** level) * Math.cos((latitude * Math.PI) / 180);

t.test('zoom 16 and deeper: no grid, events one by one', async (t) => {
  for (let zoom = INDIVIDUAL_ZOOM; zoom <= 22; zoom++) t.equal(clusterLevel(zoom), null, `zoom ${zoom}`);
});

t.test(
  'zoom 10 to 15: cells of roughly 100 to 1000 m (equator to 60°), finer as the zoom grows',
  async (t) => {
    let previous = Number.POSITIVE_INFINITY;
    for (let zoom = 10; zoom <= 15; zoom++) {
      const level = clusterLevel(zoom);
      t.ok(level !== null);
      if (level === null) continue;
      const atEquator = cellSizeMetres(level, 0);
      const at45 = cellSizeMetres(level, 45);
      const at60 = cellSizeMetres(level, 60);
      t.ok(atEquator <= 1250 && at60 >= 100, `zoom ${zoom}: ${Math.round(at60)}-${Math.round(atEquator)} m`);
      t.ok(at45 >= 100 && at45 <= 1000, `zoom ${zoom}: ${Math.round(at45)} m at 45°`);
      t.ok(atEquator <= previous, 'never coarser than the zoom before');
      previous = atEquator;
    }
    t.ok(
      cellSizeMetres(clusterLevel(15) ?? 0) < cellSizeMetres(clusterLevel(10) ?? 0),
      'zoom 15 is finer than zoom 10',
    );
  },
);

t.test('below 10: aggressive, cells shrink as the zoom grows and stay far above 1 km', async (t) => {
  let previous = Number.POSITIVE_INFINITY;
  for (let zoom = 0; zoom < 10; zoom++) {
    const level = clusterLevel(zoom);
    if (level === null) throw new Error('expected a level');
    const size = cellSizeMetres(level);
    t.ok(size < previous, `zoom ${zoom}`);
    t.ok(size > 10_000, `zoom ${zoom}: ${Math.round(size)} m`);
    previous = size;
  }
  const nine = clusterLevel(9) ?? 0;
  const ten = clusterLevel(10) ?? 0;
  t.ok(ten > nine, 'zoom 10 uses a finer grid than zoom 9');
});

t.test('mercatorCell and cellBounds agree', async (t) => {
  t.same(mercatorCell(-180, 85.06, 1), { x: 0, y: 0 });
  t.same(mercatorCell(180, -90, 1), { x: 1, y: 1 }, 'edges clamp into the grid');
  const berlin = mercatorCell(13.405, 52.52, 12);
  const box = cellBounds(berlin.x, berlin.y, 12);
  t.ok(box.west <= 13.405 && 13.405 < box.east);
  t.ok(box.south <= 52.52 && 52.52 < box.north);
});

t.test('innerCellRange keeps only cells wholly inside the box', async (t) => {
  const box = { north: 55, south: 47, east: 15, west: 5 };
  const inner = innerCellRange(box, 10);
  t.ok(inner);
  if (!inner) return;
  for (const [x, y] of [
    [inner.x0, inner.y0],
    [inner.x1, inner.y1],
  ] as const) {
    const cell = cellBounds(x, y, 10);
    t.ok(
      cell.west >= box.west && cell.east <= box.east && cell.south >= box.south && cell.north <= box.north,
    );
  }
  const outside = cellBounds(inner.x0 - 1, inner.y0, 10);
  t.ok(outside.west < box.west, 'the column left of the range sticks out');
  t.equal(
    innerCellRange({ north: 52.01, south: 52, east: 13.01, west: 13 }, 10),
    null,
    'a tiny box holds no whole cell',
  );
  const world = innerCellRange({ north: 90, south: -90, east: 180, west: -180 }, 10);
  t.same(world, { x0: 0, x1: 1023, y0: 0, y1: 1023 }, 'the whole world takes every cell');
  const north = innerCellRange({ north: 89, south: -90, east: 180, west: -180 }, 10);
  t.equal(north?.y0, 1, 'the pole row holds events beyond 85.05°, not all inside a box ending at 89°');
});

t.test('gridRange holds every point of the box', async (t) => {
  const box = { north: 52.7, south: 52.3, east: 13.8, west: 13.0 };
  const range = gridRange(box);
  for (const [lon, lat] of [
    [13.0, 52.7],
    [13.8, 52.3],
    [13.4, 52.5],
  ] as const) {
    const cell = mercatorCell(lon, lat, 24);
    t.ok(
      cell.x >= range.x0 && cell.x <= range.x1 && cell.y >= range.y0 && cell.y <= range.y1,
      `${lon},${lat}`,
    );
  }
  t.same(gridRange({ north: 90, south: -90, east: 180, west: -180 }), {
    x0: 0,
    x1: 2 ** 24 - 1,
    y0: 0,
    y1: 2 ** 24 - 1,
  });
});

t.test('mercatorShare: the share of the world map a box covers', async (t) => {
  const near = (actual: number, expected: number, label: string) =>
    t.ok(Math.abs(actual - expected) < 1e-6, `${label}: ${actual} ~ ${expected}`);
  near(mercatorShare({ north: 90, south: -90, east: 180, west: -180 }), 1, 'the world');
  near(mercatorShare({ north: 85.06, south: -85.06, east: 180, west: -180 }), 1, 'the Mercator world');
  near(mercatorShare({ north: 90, south: 0, east: 0, west: -180 }), 0.25, 'a quarter');
  near(mercatorShare({ north: 90, south: -90, east: 170, west: -170 }), 340 / 360, 'all but 20 degrees');
  near(mercatorShare({ north: 90, south: -90, east: -170, west: 170 }), 20 / 360, 'across the antimeridian');
  t.ok(mercatorShare({ north: 53, south: 52, east: 14, west: 13 }) < 1e-4, 'a city');
});

t.test(
  'cellRangeBounds: the cells of the events around them, the edge rows reaching the poles',
  async (t) => {
    const berlin = mercatorCell(13.405, 52.52, 10);
    const tokyo = mercatorCell(139.69, 35.69, 10);
    const box = cellRangeBounds({ x0: berlin.x, x1: tokyo.x, y0: berlin.y, y1: tokyo.y }, 10);
    t.ok(box.west <= 13.405 && box.west > 13.405 - 360 / 1024, 'west within a cell');
    t.ok(box.east >= 139.69 && box.east < 139.69 + 360 / 1024, 'east within a cell');
    t.ok(box.north >= 52.52 && box.south <= 35.69);
    const pole = mercatorCell(18, 89.5, 10);
    t.equal(pole.y, 0, 'beyond the Mercator limit: the top row');
    const polar = cellRangeBounds({ x0: pole.x, x1: pole.x, y0: 0, y1: 1023 }, 10);
    t.equal(polar.north, 90);
    t.equal(polar.south, -90);
  },
);
