import { fileWriter, ParquetWriter } from 'hyparquet-writer';
import type { EventFeature } from '../../domain/read/event-feature.ts';
import type { PropertyField, PropertyType } from '../../domain/read/typed-properties.ts';
import { Extent, pointWkb, provenanceText, records, typedColumns } from './export-records.ts';

// A GeoParquet 1.1 file (geoparquet.org) of exported events, written by hyparquet-writer
// (docs/decisions.md): the fixed properties and, in an export of one dataset, a column of its type
// per typed property, then `geometry` as WKB; the `geo` file metadata names it (encoding WKB,
// geometry types, bbox; no `crs`, which GeoParquet reads as OGC:CRS84, longitude first). Rows go
// out in row groups of ROW_GROUP_ROWS, so memory is one row group whatever the export's size; the
// columns are Snappy-compressed (the writer's default).

/** Rows per row group: ~10-20 MB of events before compression, a unit readers can skip by statistics. */
const ROW_GROUP_ROWS = 50_000;

type SchemaElement = {
  name: string;
  type?: 'BOOLEAN' | 'INT64' | 'DOUBLE' | 'BYTE_ARRAY';
  converted_type?: 'UTF8' | 'JSON';
  logical_type?: { type: 'TIMESTAMP'; isAdjustedToUTC: boolean; unit: 'MILLIS' };
  repetition_type?: 'REQUIRED' | 'OPTIONAL';
  num_children?: number;
};

const TIMESTAMP = { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' } as const;

function element(name: string, type: PropertyType): SchemaElement {
  const optional = 'OPTIONAL' as const;
  switch (type) {
    case 'integer':
      return { name, type: 'INT64', repetition_type: optional };
    case 'number':
      return { name, type: 'DOUBLE', repetition_type: optional };
    case 'boolean':
      return { name, type: 'BOOLEAN', repetition_type: optional };
    case 'date':
      return { name, type: 'INT64', logical_type: TIMESTAMP, repetition_type: optional };
    case 'string':
      return { name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: optional };
  }
}

type ParquetColumn = { element: SchemaElement; value: (feature: EventFeature) => unknown };

const dateValue = (value: unknown) => (typeof value === 'string' ? BigInt(Date.parse(value)) : null);

function columnsOf(fields: readonly PropertyField[]): ParquetColumn[] {
  const text = (name: string): SchemaElement => ({
    name,
    type: 'BYTE_ARRAY',
    converted_type: 'UTF8',
    repetition_type: 'OPTIONAL',
  });
  const fixed: ParquetColumn[] = [
    { element: { name: 'id', type: 'INT64', repetition_type: 'REQUIRED' }, value: (f) => BigInt(f.id) },
    { element: text('title'), value: (f) => f.properties.title },
    {
      element: {
        name: 'eventTimestamp',
        type: 'INT64',
        logical_type: TIMESTAMP,
        repetition_type: 'REQUIRED',
      },
      value: (f) => dateValue(f.properties.eventTimestamp),
    },
    { element: text('dataset'), value: (f) => f.properties.dataset },
    { element: text('catalog'), value: (f) => f.properties.catalog },
    {
      element: { name: 'data', type: 'BYTE_ARRAY', converted_type: 'JSON', repetition_type: 'OPTIONAL' },
      value: (f) => JSON.stringify(f.properties.data),
    },
    {
      element: {
        name: 'provenance',
        type: 'BYTE_ARRAY',
        converted_type: 'JSON',
        repetition_type: 'OPTIONAL',
      },
      value: (f) => provenanceText(f),
    },
  ];
  const typed = typedColumns([...fixed.map((column) => column.element.name), 'geometry'], fields).map(
    ({ field, column }): ParquetColumn => ({
      element: element(column, field.type),
      value: (f) => {
        const value = f.properties[field.name] ?? null;
        if (value === null) return null;
        if (field.type === 'integer') return BigInt(value as number);
        if (field.type === 'date') return dateValue(value);
        return value;
      },
    }),
  );
  const geometry: ParquetColumn = {
    element: { name: 'geometry', type: 'BYTE_ARRAY', repetition_type: 'OPTIONAL' },
    value: (f) => {
      const point = f.geometry?.coordinates;
      return point ? new Uint8Array(pointWkb(point[0], point[1])) : null;
    },
  };
  return [...fixed, ...typed, geometry];
}

/** Writes the features of `sequence` into a new GeoParquet file at `file`. */
export async function writeGeoParquet(
  file: string,
  sequence: AsyncIterable<string>,
  fields: readonly PropertyField[],
): Promise<void> {
  const columns = columnsOf(fields);
  const schema = [{ name: 'root', num_children: columns.length }, ...columns.map((column) => column.element)];
  // The `geo` metadata is written with the footer, after the rows: its bbox is known then.
  const metadata: Array<{ key: string; value: string }> = [];
  const writer = new ParquetWriter({
    writer: fileWriter(file),
    schema: schema as never,
    kvMetadata: metadata,
    createdBy: 'Chronomap',
  });
  const extent = new Extent();
  let rows: EventFeature[] = [];
  const flush = async () => {
    if (rows.length === 0) return;
    const batch = rows;
    rows = [];
    const columnData = columns.map((column) => ({
      name: column.element.name,
      data: batch.map((feature) => column.value(feature)),
    }));
    await writer.write({ columnData: columnData as never, rowGroupSize: batch.length });
  };
  let located = false;
  for await (const feature of records(sequence)) {
    const point = feature.geometry?.coordinates;
    if (point) {
      extent.add(point);
      located = true;
    }
    rows.push(feature);
    if (rows.length >= ROW_GROUP_ROWS) await flush();
  }
  await flush();
  metadata.push({
    key: 'geo',
    value: JSON.stringify({
      version: '1.1.0',
      primary_column: 'geometry',
      columns: {
        geometry: {
          encoding: 'WKB',
          geometry_types: located ? ['Point'] : [],
          ...(extent.box() ? { bbox: extent.box() } : {}),
        },
      },
    }),
  });
  await writer.finish();
}
