import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import t from 'tap';
import { mercatorCell } from '../../../src/domain/read/clustering.ts';
import type { Requester } from '../../helpers/accounts.ts';
import { ALL, GROUP, LONE, PAIR, type Point, near, setUp } from '../../helpers/location-privacy.ts';

// Location privacy per dataset (issue 38 §4, migration 0880): a dataset generalised to 1 km cells
// with k = 3 holds a group of five events in one cell, a pair in another and lone events. Asked
// every way a client could compare answers (zooms 15 and 16, overlapping and shrinking boxes, tile
// against /geo, narrowed date windows, CQL2 polygons, OGC items, exports), anonymous callers and
// other users get no location but the group's cell centre; the owner gets the exact points.

function box(west: number, south: number, east: number, north: number): string {
  return encodeURIComponent(JSON.stringify({ west, south, east, north }));
}

async function listed(get: Requester, query: string): Promise<Array<Point | null>> {
  const response = await get('GET', `/api/v1/events?limit=100${query}`);
  if (response.statusCode !== 200) throw new Error(response.body);
  return response
    .json()
    .events.map((e: { location: { longitude: number; latitude: number } | null }) =>
      e.location ? [e.location.longitude, e.location.latitude] : null,
    );
}

async function geoPoints(get: Requester, zoom: number, bounds: string, extra = ''): Promise<Point[]> {
  const response = await get('GET', `/api/v1/events/geo?zoom=${zoom}&bounds=${bounds}${extra}`);
  if (response.statusCode !== 200) throw new Error(response.body);
  return response.json().features.map((f: { geometry: { coordinates: Point } }) => f.geometry.coordinates);
}

async function tilePoints(get: Requester, z: number, lon: number, lat: number): Promise<Point[]> {
  const cell = mercatorCell(lon, lat, z);
  const response = await get('GET', `/api/v1/tiles/${z}/${cell.x}/${cell.y}.mvt`);
  if (response.statusCode === 204) return [];
  const layer = new VectorTile(new PbfReader(response.rawPayload)).layers.events;
  const points: Point[] = [];
  for (let i = 0; layer && i < layer.length; i += 1) {
    const geometry = layer.feature(i).toGeoJSON(cell.x, cell.y, z).geometry as unknown as {
      coordinates: Point;
    };
    points.push(geometry.coordinates);
  }
  return points;
}

t.test('non-writers never see a location finer than the cell, nor one under k', async (t) => {
  const { as, login, owner, stranger, centre } = await setUp(t);
  const viewers: Record<string, Requester> = {
    anonymous: as(null),
    stranger: as(await login(stranger)),
  };
  const world = box(-180, -85, 180, 85);
  const region = box(13, 52, 14, 53);
  for (const [who, get] of Object.entries(viewers)) {
    const all = await listed(get, '');
    t.equal(all.length, ALL.length, `${who}: every event is listed`);
    t.equal(all.filter((p) => p !== null).length, GROUP.length, `${who}: only the group is located`);
    t.ok(
      all.every((p) => p === null || near(p, centre)),
      `${who}: every location is the group's cell centre`,
      { found: all },
    );
    for (const zoom of [10, 14, 15, 16, 18]) {
      for (const bounds of [world, region, box(13.3, 52.4, 13.5, 52.6), box(13.35, 52.45, 13.45, 52.55)]) {
        const points = await geoPoints(get, zoom, bounds);
        t.ok(
          points.every((p) => Math.abs(p[0] - centre[0]) < 1e-6 && Math.abs(p[1] - centre[1]) < 1e-6),
          `${who}: /geo at zoom ${zoom} shows only the cell centre`,
          { found: points, centre },
        );
      }
    }
    const tilesAt = [12, 15, 16, 18].map((z) => tilePoints(get, z, centre[0], centre[1]));
    for (const points of await Promise.all(tilesAt))
      t.ok(
        points.every((p) => Math.abs(p[0] - centre[0]) < 1e-4 && Math.abs(p[1] - centre[1]) < 1e-4),
        `${who}: a tile draws only at the cell centre`,
      );
    for (const [lon, lat] of [...LONE, ...PAIR]) {
      const lonely = await tilePoints(get, 16, lon, lat);
      t.same(lonely, [], `${who}: no tile shows an event under k`);
    }
    // Shrinking boxes around every exact point: nothing but the centre is ever found.
    for (const [lon, lat] of ALL) {
      for (const size of [0.1, 0.01, 0.001, 0.0001]) {
        const around = box(lon - size, lat - size, lon + size, lat + size);
        const found = await listed(get, `&bounds=${around}`);
        const holdsCentre = Math.abs(centre[0] - lon) <= size && Math.abs(centre[1] - lat) <= size;
        t.equal(found.length, holdsCentre ? GROUP.length : 0, `${who}: box ${size} around ${lon},${lat}`);
      }
    }
    // A narrowed date window over one group member: still the centre, not its point.
    const one = await listed(get, '&startDate=2025-01-02&endDate=2025-01-02');
    t.ok(
      one.every((p) => p === null || near(p, centre)),
      `${who}: a one-day window`,
    );
    const counted = await get('GET', `/api/v1/events/bounds`);
    t.equal(counted.statusCode, 200);
    const bounds = counted.json();
    const extent = bounds.bounds ?? bounds;
    if (extent && typeof extent.west === 'number')
      t.ok(
        Math.abs(extent.west - centre[0]) < 1e-9 && Math.abs(extent.north - centre[1]) < 1e-9,
        `${who}: /bounds is the centre's`,
      );
    // CQL2 polygons on OGC items, shrinking around a lone event and around a group member.
    for (const [lon, lat] of [LONE[0]!, GROUP[0]!, PAIR[0]!]) {
      for (const size of [0.05, 0.005, 0.0005]) {
        const polygon = `POLYGON((${lon - size} ${lat - size},${lon + size} ${lat - size},${lon + size} ${lat + size},${lon - size} ${lat + size},${lon - size} ${lat - size}))`;
        const filter = encodeURIComponent(`S_INTERSECTS(geometry,${polygon})`);
        const items = await get('GET', `/ogc/collections/sightings/items?filter=${filter}`);
        t.equal(items.statusCode, 200, `${who}: CQL2 ${items.statusCode === 200 ? '' : items.body}`);
        const features = items.json().features as Array<{ geometry: { coordinates: Point } | null }>;
        const holdsCentre = Math.abs(centre[0] - lon) <= size && Math.abs(centre[1] - lat) <= size;
        t.equal(features.length, holdsCentre ? GROUP.length : 0, `${who}: s_intersects ${size} at ${lon}`);
      }
    }
    const items = await get('GET', '/ogc/collections/sightings/items');
    const geometries = (items.json().features as Array<{ geometry: { coordinates: Point } | null }>).map(
      (f) => f.geometry?.coordinates ?? null,
    );
    t.ok(
      geometries.every((p) => p === null || near(p, centre)),
      `${who}: OGC items carry only the centre`,
    );
    const geojson = await get('GET', '/api/v1/events.geojson');
    const exported = (geojson.json().features as Array<{ geometry: { coordinates: Point } | null }>).map(
      (f) => f.geometry?.coordinates ?? null,
    );
    t.equal(exported.length, ALL.length, `${who}: the GeoJSON export lists every event`);
    t.ok(
      exported.every((p) => p === null || near(p, centre)),
      `${who}: the GeoJSON export`,
    );
    const csv = await get('GET', '/api/v1/events.csv');
    for (const [lon, lat] of ALL)
      t.notOk(csv.body.includes(String(lon)) || csv.body.includes(String(lat)), `${who}: csv hides ${lon}`);
  }

  const mine = await listed(as(await login(owner)), '');
  t.same(
    mine.map((p) => p && p.map((v) => Math.round(v * 1e4) / 1e4)).sort(),
    ALL.map((p) => p.map((v) => Math.round(v * 1e4) / 1e4)).sort(),
    'the owner sees the exact points',
  );
});
