import { Type } from 'typebox';
import { Id, Nullable, Timestamp } from './events-schemas.ts';

// The bodies of GET /api/v1/events.geojson and /api/v1/events.csv as the document states them (the
// routes stream text, so these describe the answer for clients; Fastify never serializes with them).

const ExportFeature = Type.Object({
  type: Type.Literal('Feature'),
  id: Id,
  geometry: Nullable(
    Type.Object({
      type: Type.Literal('Point'),
      coordinates: Type.Array(Type.Number(), {
        minItems: 2,
        maxItems: 2,
        description: '[longitude, latitude]',
      }),
    }),
  ),
  properties: Type.Object({
    title: Nullable(Type.String()),
    eventTimestamp: Timestamp,
    dataset: Type.String({ description: 'Dataset slug.' }),
    catalog: Type.String({ description: 'Catalog slug.' }),
    data: Type.Object({}, { additionalProperties: true, description: 'The event’s data as stored.' }),
  }),
});

export const GeoJsonExport = Type.Object(
  { type: Type.Literal('FeatureCollection'), features: Type.Array(ExportFeature) },
  {
    examples: [
      {
        type: 'FeatureCollection',
        features: [
          {
            type: 'Feature',
            id: 1,
            geometry: { type: 'Point', coordinates: [13.4, 52.52] },
            properties: {
              title: 'Opening of the bridge',
              eventTimestamp: '2024-05-01T10:00:00.000Z',
              dataset: 'city-events',
              catalog: 'berlin',
              data: { attendance: 1200 },
            },
          },
        ],
      },
    ],
  },
);

export const CsvExport = Type.String({
  description: 'RFC 4180 CSV, a header line first.',
  examples: [
    'id,title,eventTimestamp,dataset,catalog,longitude,latitude,attendance\r\n' +
      '1,Opening of the bridge,2024-05-01T10:00:00.000Z,city-events,berlin,13.4,52.52,1200\r\n',
  ],
});
