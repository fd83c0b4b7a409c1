import type { EventFeature } from '../../domain/read/event-feature.ts';
import type { PropertyField } from '../../domain/read/typed-properties.ts';

// What the file formats of the exports (GeoPackage, FlatGeobuf, GeoParquet) share: the features of the
// export's GeoJSON text sequence, the columns of its typed properties, a point as WKB and the extent.

/** The features of a GeoJSON text sequence, from text that arrives in pieces cut at record ends. */
export async function* records(sequence: AsyncIterable<string>): AsyncGenerator<EventFeature> {
  for await (const piece of sequence) {
    for (const record of piece.split('\x1e')) {
      if (record.trim() !== '') yield JSON.parse(record) as EventFeature;
    }
  }
}

/**
 * The event's provenance as JSON text, exactly the object the GeoJSON export carries (one projection,
 * provenance-sql.ts: `{"shown":false}` where the dataset hides it); null for a record without one.
 */
export function provenanceText(feature: EventFeature): string | null {
  const provenance = feature.properties.provenance;
  return provenance === undefined ? null : JSON.stringify(provenance);
}

/** A typed property and the name of its column in a file. */
type TypedColumn = { field: PropertyField; column: string };

/**
 * The columns of the typed properties beside a file's own columns (`taken`): a property keeps its
 * name unless a column has it already, compared without case (SQLite's and GDAL's column names are
 * case-insensitive); then it is prefixed with `data_` until it is unique, as typed-properties.ts
 * renames a property that collides with a fixed one.
 */
export function typedColumns(taken: readonly string[], fields: readonly PropertyField[]): TypedColumn[] {
  const used = new Set(taken.map((name) => name.toLowerCase()));
  return fields.map((field) => {
    let column = field.name;
    while (used.has(column.toLowerCase())) column = `data_${column}`;
    used.add(column.toLowerCase());
    return { field, column };
  });
}

/** A point as ISO WKB (little-endian, 21 bytes). */
export function pointWkb(longitude: number, latitude: number): Buffer {
  const wkb = Buffer.alloc(21);
  wkb.writeUInt8(1, 0);
  wkb.writeUInt32LE(1, 1);
  wkb.writeDoubleLE(longitude, 5);
  wkb.writeDoubleLE(latitude, 13);
  return wkb;
}

/** The bounding box of the points seen; null before the first. */
export class Extent {
  minX = Infinity;
  minY = Infinity;
  maxX = -Infinity;
  maxY = -Infinity;

  add(point: readonly [number, number]): void {
    this.minX = Math.min(this.minX, point[0]);
    this.minY = Math.min(this.minY, point[1]);
    this.maxX = Math.max(this.maxX, point[0]);
    this.maxY = Math.max(this.maxY, point[1]);
  }

  box(): [number, number, number, number] | null {
    return Number.isFinite(this.minX) ? [this.minX, this.minY, this.maxX, this.maxY] : null;
  }
}
