// Where the Explore page looks first without a view in its URL: the events' bounds
// (GET /api/v1/events/bounds), or the whole world when they go around it.

/**
 * @param {{ west: number, south: number, east: number, north: number } | null} b the events' bounds
 * @returns {{ bounds: [[number, number], [number, number]], padding: number } | null}
 */
export function fitOf(b) {
  if (!b) return null;
  // Events around the globe (or across the antimeridian, which the bounds answer as west > east)
  // get the whole world, not the default view's part of it.
  const worldWide = b.west > b.east || b.east - b.west >= 350;
  return worldWide
    ? {
        bounds: [
          [-180, Math.max(b.south, -70)],
          [180, Math.min(b.north, 80)],
        ],
        padding: 0,
      }
    : {
        bounds: [
          [b.west, b.south],
          [b.east, b.north],
        ],
        padding: 40,
      };
}
