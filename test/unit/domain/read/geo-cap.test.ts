import t from 'tap';
import { clusterLevel } from '../../../../src/domain/read/clustering.ts';
import { capClusterLevel, cellsTouched, GEO_MAX_CELLS } from '../../../../src/domain/read/geo-cap.ts';

const world = { north: 90, south: -90, east: 180, west: -180 };
const berlin = { north: 52.6, south: 52.4, east: 13.6, west: 13.2 };

/** The box a full-HD (1920 x 1080) map window shows around Berlin at a zoom. */
function fullHdView(zoom: number) {
  const width = (1920 / 256) * (360 / 2 ** zoom);
  const height = width * (1080 / 1920) * Math.cos((52.5 * Math.PI) / 180);
  return {
    north: 52.5 + height / 2,
    south: 52.5 - height / 2,
    east: 13.4 + width / 2,
    west: 13.4 - width / 2,
  };
}

t.test('a full-HD map window keeps the level its zoom asks for, at every zoom', async (t) => {
  for (let zoom = 0; zoom <= 22; zoom += 1) {
    const view = zoom < 3 ? world : fullHdView(zoom);
    t.same(
      capClusterLevel(clusterLevel(zoom), view),
      { level: clusterLevel(zoom), capped: false },
      `zoom ${zoom}`,
    );
  }
  t.equal(capClusterLevel(clusterLevel(18), berlin).capped, true, 'a city at zoom 18 is capped');
});

t.test('any box at any zoom spans at most GEO_MAX_CELLS cells of the level used', async (t) => {
  const boxes = [
    world,
    { north: 80, south: -80, east: -170, west: 170 },
    { north: 10, south: -10, east: 179, west: -179 },
  ];
  for (const box of boxes) {
    for (let zoom = 0; zoom <= 22; zoom += 1) {
      const { level, capped } = capClusterLevel(clusterLevel(zoom), box);
      t.ok(cellsTouched(box, level ?? 20) <= GEO_MAX_CELLS, `zoom ${zoom}: ${level}`);
      if (zoom >= 10 && box === world) t.ok(capped, `world at zoom ${zoom} is capped`);
    }
  }
});
