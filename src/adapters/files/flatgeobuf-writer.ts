import { type FileHandle, open, unlink } from 'node:fs/promises';
import { Builder } from 'flatbuffers';
import { Column } from 'flatgeobuf/lib/mjs/flat-geobuf/column.js';
import { ColumnType } from 'flatgeobuf/lib/mjs/flat-geobuf/column-type.js';
import { Crs } from 'flatgeobuf/lib/mjs/flat-geobuf/crs.js';
import { Feature } from 'flatgeobuf/lib/mjs/flat-geobuf/feature.js';
import { Geometry } from 'flatgeobuf/lib/mjs/flat-geobuf/geometry.js';
import { GeometryType } from 'flatgeobuf/lib/mjs/flat-geobuf/geometry-type.js';
import { Header } from 'flatgeobuf/lib/mjs/flat-geobuf/header.js';
import type { EventFeature } from '../../domain/read/event-feature.ts';
import type { PropertyField, PropertyType } from '../../domain/read/typed-properties.ts';
import { Extent, provenanceText, records, typedColumns } from './export-records.ts';

// A FlatGeobuf file (flatgeobuf.org, format version 3) of exported events, with a packed Hilbert
// R-tree so GDAL and QGIS read a bounding box of it (also by range, through /vsicurl/). The tables
// are built with the flatgeobuf package's own FlatBuffers classes; its writer (`serialize`) is not
// used: it holds the whole collection in memory, writes no index and takes the column types from
// the first feature's values. In two passes: each feature is encoded once into a temporary file
// while its point and place are noted (40 bytes an event); then the header, the index and the
// features in the index's (Hilbert) order are written. An event without a location is kept, after
// the located ones, with an empty box in the index: a bounding-box read never finds it, a full read does.

const MAGIC = new Uint8Array([0x66, 0x67, 0x62, 0x03, 0x66, 0x67, 0x62, 0x00]);
const NODE_SIZE = 16;
const NODE_BYTES = 40;

const COLUMN_TYPES: Record<PropertyType, ColumnType> = {
  integer: ColumnType.Long,
  number: ColumnType.Double,
  boolean: ColumnType.Bool,
  date: ColumnType.DateTime,
  string: ColumnType.String,
};

type FgbColumn = { name: string; type: ColumnType; value: (feature: EventFeature) => unknown };

function columnsOf(fields: readonly PropertyField[]): FgbColumn[] {
  const fixed: FgbColumn[] = [
    { name: 'id', type: ColumnType.Long, value: (f) => f.id },
    { name: 'title', type: ColumnType.String, value: (f) => f.properties.title },
    { name: 'eventTimestamp', type: ColumnType.DateTime, value: (f) => f.properties.eventTimestamp },
    { name: 'dataset', type: ColumnType.String, value: (f) => f.properties.dataset },
    { name: 'catalog', type: ColumnType.String, value: (f) => f.properties.catalog },
    { name: 'data', type: ColumnType.Json, value: (f) => JSON.stringify(f.properties.data) },
    { name: 'provenance', type: ColumnType.Json, value: (f) => provenanceText(f) },
  ];
  const typed = typedColumns(
    fixed.map((column) => column.name),
    fields,
  ).map(({ field, column }) => ({
    name: column,
    type: COLUMN_TYPES[field.type],
    value: (f: EventFeature) => f.properties[field.name],
  }));
  return [...fixed, ...typed];
}

const encoder = new TextEncoder();

/** A feature's properties: for each non-null value, its column index (u16) and the value. */
function propertyBytes(columns: readonly FgbColumn[], feature: EventFeature): Uint8Array {
  const parts: Buffer[] = [];
  columns.forEach((column, index) => {
    const value = column.value(feature);
    if (value === null || value === undefined) return;
    const head = Buffer.alloc(2);
    head.writeUInt16LE(index);
    parts.push(head);
    if (column.type === ColumnType.Bool) parts.push(Buffer.from([value === true ? 1 : 0]));
    else if (column.type === ColumnType.Long) {
      const bytes = Buffer.alloc(8);
      bytes.writeBigInt64LE(BigInt(value as number));
      parts.push(bytes);
    } else if (column.type === ColumnType.Double) {
      const bytes = Buffer.alloc(8);
      bytes.writeDoubleLE(value as number);
      parts.push(bytes);
    } else {
      const text = encoder.encode(String(value));
      const length = Buffer.alloc(4);
      length.writeUInt32LE(text.length);
      parts.push(length, Buffer.from(text));
    }
  });
  return Buffer.concat(parts);
}

/** One feature as a size-prefixed FlatBuffers table. */
function featureBytes(columns: readonly FgbColumn[], feature: EventFeature): Uint8Array {
  const builder = new Builder(256);
  const properties = Feature.createPropertiesVector(builder, propertyBytes(columns, feature));
  const point = feature.geometry?.coordinates;
  let geometry = 0;
  if (point) {
    const xy = Geometry.createXyVector(builder, point);
    Geometry.startGeometry(builder);
    Geometry.addXy(builder, xy);
    geometry = Geometry.endGeometry(builder);
  }
  Feature.startFeature(builder);
  if (geometry) Feature.addGeometry(builder, geometry);
  Feature.addProperties(builder, properties);
  builder.finishSizePrefixed(Feature.endFeature(builder));
  return builder.asUint8Array();
}

function headerBytes(columns: readonly FgbColumn[], count: number, extent: Extent): Uint8Array {
  const builder = new Builder(1024);
  const columnOffsets = columns.map((column) => {
    const name = builder.createString(column.name);
    Column.startColumn(builder);
    Column.addName(builder, name);
    Column.addType(builder, column.type);
    Column.addNullable(builder, column.name !== 'id');
    return Column.endColumn(builder);
  });
  const columnVector = Header.createColumnsVector(builder, columnOffsets);
  const name = builder.createString('events');
  const organisation = builder.createString('EPSG');
  Crs.startCrs(builder);
  Crs.addOrg(builder, organisation);
  Crs.addCode(builder, 4326);
  const crs = Crs.endCrs(builder);
  const box = extent.box();
  const envelope = box ? Header.createEnvelopeVector(builder, box) : 0;
  Header.startHeader(builder);
  Header.addName(builder, name);
  if (envelope) Header.addEnvelope(builder, envelope);
  Header.addGeometryType(builder, GeometryType.Point);
  Header.addColumns(builder, columnVector);
  Header.addFeaturesCount(builder, BigInt(count));
  Header.addIndexNodeSize(builder, count > 0 ? NODE_SIZE : 0);
  Header.addCrs(builder, crs);
  builder.finishSizePrefixed(Header.endHeader(builder));
  return builder.asUint8Array();
}

/** The Hilbert curve index of (x, y) on a 2^16 grid (the FlatGeobuf reference implementation's). */
function hilbert(x: number, y: number): number {
  let a = x ^ y;
  let b = 0xffff ^ a;
  let c = 0xffff ^ (x | y);
  let d = x & (y ^ 0xffff);
  let A = a | (b >> 1);
  let B = (a >> 1) ^ a;
  let C = (c >> 1) ^ (b & (d >> 1)) ^ c;
  let D = (a & (c >> 1)) ^ (d >> 1) ^ d;
  a = A;
  b = B;
  c = C;
  d = D;
  A = (a & (a >> 2)) ^ (b & (b >> 2));
  B = (a & (b >> 2)) ^ (b & ((a ^ b) >> 2));
  C ^= (a & (c >> 2)) ^ (b & (d >> 2));
  D ^= (b & (c >> 2)) ^ ((a ^ b) & (d >> 2));
  a = A;
  b = B;
  c = C;
  d = D;
  A = (a & (a >> 4)) ^ (b & (b >> 4));
  B = (a & (b >> 4)) ^ (b & ((a ^ b) >> 4));
  C ^= (a & (c >> 4)) ^ (b & (d >> 4));
  D ^= (b & (c >> 4)) ^ ((a ^ b) & (d >> 4));
  a = A;
  b = B;
  c = C;
  d = D;
  C ^= (a & (c >> 8)) ^ (b & (d >> 8));
  D ^= (b & (c >> 8)) ^ ((a ^ b) & (d >> 8));
  a = C ^ (C >> 1);
  b = D ^ (D >> 1);
  let i0 = x ^ y;
  let i1 = b | (0xffff ^ (i0 | a));
  i0 = (i0 | (i0 << 8)) & 0x00ff00ff;
  i0 = (i0 | (i0 << 4)) & 0x0f0f0f0f;
  i0 = (i0 | (i0 << 2)) & 0x33333333;
  i0 = (i0 | (i0 << 1)) & 0x55555555;
  i1 = (i1 | (i1 << 8)) & 0x00ff00ff;
  i1 = (i1 | (i1 << 4)) & 0x0f0f0f0f;
  i1 = (i1 | (i1 << 2)) & 0x33333333;
  i1 = (i1 | (i1 << 1)) & 0x55555555;
  return ((i1 << 1) | i0) >>> 0;
}

/** Per feature: its point (NaN without one), and its place and length in the temporary file. */
class Notes {
  x = new Float64Array(1024);
  y = new Float64Array(1024);
  at = new Float64Array(1024);
  length = new Float64Array(1024);
  count = 0;

  add(x: number, y: number, at: number, length: number) {
    if (this.count === this.x.length) {
      for (const key of ['x', 'y', 'at', 'length'] as const) {
        const grown = new Float64Array(this.count * 2);
        grown.set(this[key]);
        this[key] = grown;
      }
    }
    this.x[this.count] = x;
    this.y[this.count] = y;
    this.at[this.count] = at;
    this.length[this.count] = length;
    this.count += 1;
  }
}

/** The features' order: located ones by Hilbert value of their point, then those without a location. */
function hilbertOrder(notes: Notes, extent: Extent): number[] {
  const [minX, minY, maxX, maxY] = extent.box() ?? [0, 0, 0, 0];
  const width = maxX - minX || 1;
  const height = maxY - minY || 1;
  const keys = new Float64Array(notes.count);
  for (let i = 0; i < notes.count; i += 1) {
    const x = notes.x[i] as number;
    keys[i] = Number.isNaN(x)
      ? Infinity
      : hilbert(
          Math.floor((0xffff * (x - minX)) / width),
          Math.floor((0xffff * ((notes.y[i] as number) - minY)) / height),
        );
  }
  return Array.from({ length: notes.count }, (_, i) => i).sort(
    (a, b) => (keys[a] as number) - (keys[b] as number),
  );
}

/**
 * The packed R-tree: the node items of every level, root first, leaves last; a leaf's offset is its
 * feature's place in the features section, an inner node's the index of its first child.
 */
function packedTree(notes: Notes, order: readonly number[]): Buffer {
  const levels: number[] = [order.length];
  for (let n = order.length; n !== 1;) {
    n = Math.ceil(n / NODE_SIZE);
    levels.push(n);
  }
  if (levels.length === 1) levels.push(1);
  const total = levels.reduce((sum, n) => sum + n, 0);
  const tree = Buffer.alloc(total * NODE_BYTES);
  const box = new Float64Array(total * 4);
  const offsets = new Float64Array(total);
  let start = total - order.length;
  let place = 0;
  order.forEach((feature, i) => {
    const x = notes.x[feature] as number;
    const y = notes.y[feature] as number;
    const located = !Number.isNaN(x);
    box.set(located ? [x, y, x, y] : [Infinity, Infinity, -Infinity, -Infinity], (start + i) * 4);
    offsets[start + i] = place;
    place += notes.length[feature] as number;
  });
  for (let level = 0; level < levels.length - 1; level += 1) {
    const end = start + (levels[level] as number);
    let parent = start - (levels[level + 1] as number);
    const nextStart = parent;
    for (let child = start; child < end; parent += 1) {
      offsets[parent] = child;
      const item = [Infinity, Infinity, -Infinity, -Infinity];
      for (let j = 0; j < NODE_SIZE && child < end; j += 1, child += 1) {
        item[0] = Math.min(item[0] as number, box[child * 4] as number);
        item[1] = Math.min(item[1] as number, box[child * 4 + 1] as number);
        item[2] = Math.max(item[2] as number, box[child * 4 + 2] as number);
        item[3] = Math.max(item[3] as number, box[child * 4 + 3] as number);
      }
      box.set(item, parent * 4);
    }
    start = nextStart;
  }
  for (let i = 0; i < total; i += 1) {
    for (let k = 0; k < 4; k += 1) tree.writeDoubleLE(box[i * 4 + k] as number, i * NODE_BYTES + k * 8);
    tree.writeBigUInt64LE(BigInt(offsets[i] as number), i * NODE_BYTES + 32);
  }
  return tree;
}

/** Writes to a file in pieces of about a megabyte: one system call per piece, not per feature. */
class BufferedFile {
  private pieces: Uint8Array[] = [];
  private bytes = 0;
  private readonly handle: FileHandle;

  constructor(handle: FileHandle) {
    this.handle = handle;
  }

  async write(piece: Uint8Array): Promise<void> {
    this.pieces.push(piece);
    this.bytes += piece.length;
    if (this.bytes >= 1 << 20) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.bytes === 0) return;
    await this.handle.write(Buffer.concat(this.pieces));
    this.pieces = [];
    this.bytes = 0;
  }
}

/** Writes the features of `sequence` into a new FlatGeobuf file at `file` (which must not exist). */
export async function writeFlatGeobuf(
  file: string,
  sequence: AsyncIterable<string>,
  fields: readonly PropertyField[],
): Promise<void> {
  const columns = columnsOf(fields);
  const scratch = `${file}.features`;
  const notes = new Notes();
  const extent = new Extent();
  const features = await open(scratch, 'wx+', 0o600);
  try {
    const scratchFile = new BufferedFile(features);
    let written = 0;
    for await (const feature of records(sequence)) {
      const bytes = featureBytes(columns, feature);
      const point = feature.geometry?.coordinates;
      if (point) extent.add(point);
      notes.add(point?.[0] ?? NaN, point?.[1] ?? NaN, written, bytes.length);
      await scratchFile.write(bytes);
      written += bytes.length;
    }
    await scratchFile.flush();
    const output = await open(file, 'wx', 0o600);
    try {
      const outputFile = new BufferedFile(output);
      await outputFile.write(MAGIC);
      await outputFile.write(headerBytes(columns, notes.count, extent));
      if (notes.count > 0) {
        const order = hilbertOrder(notes, extent);
        await outputFile.write(packedTree(notes, order));
        for (const feature of order) {
          const bytes = Buffer.alloc(notes.length[feature] as number);
          await features.read(bytes, 0, bytes.length, notes.at[feature] as number);
          await outputFile.write(bytes);
        }
      }
      await outputFile.flush();
    } finally {
      await output.close();
    }
  } finally {
    await features.close();
    await unlink(scratch).catch(() => {});
  }
}
