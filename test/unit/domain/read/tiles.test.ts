import t from 'tap';
import { clusterLevel, GRID_LEVEL, mercatorCell } from '../../../../src/domain/read/clustering.ts';
import { ValidationError } from '../../../../src/domain/errors.ts';
import {
  crowdedTileLevel,
  parseTile,
  TILE_MAX_ZOOM,
  tileBounds,
  tileClusterLevel,
  tileReadBounds,
  tileShift,
} from '../../../../src/domain/read/tiles.ts';

t.test('parseTile: z/x/{y}.mvt within the zoom range', async (t) => {
  t.same(parseTile('0', '0', '0.mvt'), { z: 0, x: 0, y: 0 });
  t.same(parseTile('22', String(2 ** 22 - 1), `${2 ** 22 - 1}.mvt`), {
    z: 22,
    x: 2 ** 22 - 1,
    y: 2 ** 22 - 1,
  });
  const refused: Array<[unknown, unknown, unknown, string]> = [
    ['-1', '0', '0.mvt', 'z'],
    [String(TILE_MAX_ZOOM + 1), '0', '0.mvt', 'z'],
    ['a', '0', '0.mvt', 'z'],
    ['1e1', '0', '0.mvt', 'z'],
    ['', '0', '0.mvt', 'z'],
    [undefined, '0', '0.mvt', 'z'],
    ['2', '4', '0.mvt', 'x'],
    ['2', '0x1', '0.mvt', 'x'],
    ['2', '99999999999', '0.mvt', 'x'],
    ['2', '0', '4.mvt', 'y'],
    ['2', '0', '0.png', 'y'],
    ['2', '0', '0', 'y'],
    ['2', '0', '.mvt', 'y'],
    ['2', '0', '0.MVT', 'y'],
    ['2', '0', ' 1.mvt', 'y'],
  ];
  for (const [z, x, y, field] of refused) {
    const error = t.throws(() => parseTile(z, x, y), ValidationError, `${z}/${x}/${y}`) as ValidationError;
    t.equal(error.field, field, `${String(z)}/${String(x)}/${String(y)} names ${field}`);
  }
});

t.test('tileBounds: the world at zoom 0, quarters at zoom 1, the poles in the edge rows', async (t) => {
  t.same(tileBounds({ z: 0, x: 0, y: 0 }), { west: -180, east: 180, north: 90, south: -90 });
  const northEast = tileBounds({ z: 1, x: 1, y: 0 });
  t.equal(northEast.west, 0);
  t.equal(northEast.east, 180);
  t.equal(northEast.north, 90);
  t.ok(Math.abs(northEast.south) < 1e-9);
  const inner = tileBounds({ z: 3, x: 4, y: 2 });
  t.ok(inner.north < 85.06 && inner.south > 0, 'an inner tile keeps its Mercator edges');
  const widened = tileReadBounds({ z: 3, x: 4, y: 2 });
  t.ok(widened.west < inner.west && widened.east > inner.east && widened.north > inner.north);
  t.ok(widened.west > inner.west - 1e-4, 'by less than a metre');
  t.same(tileReadBounds({ z: 0, x: 0, y: 0 }), tileBounds({ z: 0, x: 0, y: 0 }), 'never beyond the world');
});

t.test('an event lies in the tile its level-24 cell shifts to, inside the tile box', async (t) => {
  for (const [lon, lat] of [
    [13.405, 52.52],
    [-74.006, 40.7128],
    [179.9, -16.3],
    [0, 0],
  ] as const) {
    const cell = mercatorCell(lon, lat, GRID_LEVEL);
    for (const z of [0, 3, 9, 14, 16, 22]) {
      const tile = {
        z,
        x: cell.x >> tileShift({ z, x: 0, y: 0 }),
        y: cell.y >> tileShift({ z, x: 0, y: 0 }),
      };
      t.same(mercatorCell(lon, lat, z), { x: tile.x, y: tile.y }, `${lon},${lat} at zoom ${z}`);
      const box = tileBounds(tile);
      t.ok(lon >= box.west && lon <= box.east && lat <= box.north && lat >= box.south);
    }
  }
});

t.test('cluster levels: those of /events/geo, never coarser than the tile', async (t) => {
  for (let z = 0; z <= TILE_MAX_ZOOM; z += 1) {
    t.equal(tileClusterLevel(z), clusterLevel(z));
    const level = tileClusterLevel(z);
    if (level !== null) t.ok(level >= z, `zoom ${z}: level ${level}`);
    t.ok(crowdedTileLevel({ z, x: 0, y: 0 }) > z && crowdedTileLevel({ z, x: 0, y: 0 }) <= GRID_LEVEL);
  }
});
