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

export const GeoJsonSequenceExport = Type.String({
  description:
    'RFC 8142: each Feature of the GeoJSON export after a record separator (0x1E), ending with a line feed.',
  examples: [
    '\u001e{"type":"Feature","id":1,"geometry":{"type":"Point","coordinates":[13.4,52.52]},"properties":' +
      '{"title":"Opening of the bridge","eventTimestamp":"2024-05-01T10:00:00.000Z","dataset":"city-events",' +
      '"catalog":"berlin","data":{"attendance":1200}}}\n',
  ],
});

export const KmlExport = Type.String({
  description: 'A KML 2.2 document, one Placemark per event.',
  examples: [
    '<?xml version="1.0" encoding="UTF-8"?>\n<kml xmlns="http://www.opengis.net/kml/2.2"><Document>' +
      '<name>Chronomap events</name>\n<Placemark id="event-1"><name>Opening of the bridge</name>' +
      '<TimeStamp><when>2024-05-01T10:00:00.000Z</when></TimeStamp><ExtendedData><Data name="dataset">' +
      '<value>city-events</value></Data><Data name="catalog"><value>berlin</value></Data></ExtendedData>' +
      '<Point><coordinates>13.4,52.52</coordinates></Point></Placemark>\n</Document></kml>\n',
  ],
});

export const GeoPackageExport = Type.String({
  format: 'binary',
  description: 'An OGC GeoPackage 1.3 (SQLite) file with one feature table, `events`.',
});

export const FlatGeobufExport = Type.String({
  format: 'binary',
  description:
    'A FlatGeobuf file (version 3) with a packed Hilbert R-tree index, one Point feature per event.',
});

export const GeoParquetExport = Type.String({
  format: 'binary',
  description: 'A GeoParquet 1.1 file: one row per event, the location as WKB in `geometry`.',
});

export const PmtilesExport = Type.String({
  format: 'binary',
  description:
    'A PMTiles v3 archive of gzipped Mapbox Vector Tiles (layer `events`), the non-empty tiles of zooms 0 to 12.',
});
