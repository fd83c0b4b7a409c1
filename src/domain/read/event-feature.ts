// An event as a GeoJSON Feature, as the exports and OGC API – Features write it (docs/api-v1.md,
// "Exports"): the event id as the Feature's id, a Point or null, and the fixed properties with the
// event's data as stored, beside the typed properties of its dataset (typed-properties.ts), if any.
export type EventFeature = {
  type: 'Feature';
  id: number;
  geometry: { type: 'Point'; coordinates: [number, number] } | null;
  properties: {
    title: string | null;
    eventTimestamp: string;
    dataset: string;
    catalog: string;
    data: Record<string, unknown>;
  } & Record<string, unknown>;
};
