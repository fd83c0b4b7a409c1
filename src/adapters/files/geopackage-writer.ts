import { DatabaseSync } from 'node:sqlite';
import type { PropertyField, PropertyType } from '../../domain/read/typed-properties.ts';
import { Extent, pointWkb, provenanceText, records, typedColumns } from './export-records.ts';

// A GeoPackage 1.3 file (OGC 12-128r18) of exported events, written with Node's own SQLite
// (node:sqlite): one feature table `events` with a POINT column in EPSG:4326, the fixed properties as
// columns and `data` as JSON text, and in an export of one dataset a typed column per typed property. The input is the GeoJSON text sequence of the export (RFC 8142
// records, export.ts), so the rows are read and their text built once, by the same statements as the
// other formats; a record is parsed, inserted, and dropped. Read back by GDAL's GPKG driver in the tests.

/** 'GPKG' as the SQLite application_id; user_version 10300: GeoPackage 1.3. */
const APPLICATION_ID = 0x47504b47;
const USER_VERSION = 10300;

const SCHEMA = `
create table gpkg_spatial_ref_sys (
  srs_name text not null, srs_id integer primary key, organization text not null,
  organization_coordsys_id integer not null, definition text not null, description text);
insert into gpkg_spatial_ref_sys values
  ('Undefined cartesian SRS', -1, 'NONE', -1, 'undefined', 'undefined cartesian coordinate reference system'),
  ('Undefined geographic SRS', 0, 'NONE', 0, 'undefined', 'undefined geographic coordinate reference system'),
  ('WGS 84 geodetic', 4326, 'EPSG', 4326,
   'GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563,AUTHORITY["EPSG","7030"]],AUTHORITY["EPSG","6326"]],PRIMEM["Greenwich",0,AUTHORITY["EPSG","8901"]],UNIT["degree",0.0174532925199433,AUTHORITY["EPSG","9122"]],AXIS["Latitude",NORTH],AXIS["Longitude",EAST],AUTHORITY["EPSG","4326"]]',
   'longitude/latitude coordinates in decimal degrees on the WGS 84 spheroid');
create table gpkg_contents (
  table_name text not null primary key, data_type text not null, identifier text unique, description text default '',
  last_change datetime not null default (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  min_x double, min_y double, max_x double, max_y double, srs_id integer references gpkg_spatial_ref_sys(srs_id));
create table gpkg_geometry_columns (
  table_name text not null, column_name text not null, geometry_type_name text not null, srs_id integer not null,
  z tinyint not null, m tinyint not null, primary key (table_name, column_name),
  foreign key (table_name) references gpkg_contents(table_name), foreign key (srs_id) references gpkg_spatial_ref_sys(srs_id));
insert into gpkg_contents (table_name, data_type, identifier, description, srs_id)
  values ('events', 'features', 'events', 'Chronomap events', 4326);
insert into gpkg_geometry_columns values ('events', 'geom', 'POINT', 4326, 0, 0);
`;

/**
 * A point as a GeoPackage geometry blob: the 8-byte header ('GP', version 0, flags: little-endian,
 * no envelope — a point's envelope is the point), the SRS id, then the point as WKB.
 */
function pointBlob(longitude: number, latitude: number): Uint8Array {
  const header = Buffer.alloc(8);
  header.write('GP', 0, 'ascii');
  header.writeUInt8(0, 2);
  header.writeUInt8(0b0000_0001, 3); // binary type standard, envelope none, little endian
  header.writeInt32LE(4326, 4);
  return Buffer.concat([header, pointWkb(longitude, latitude)]);
}

/** The GeoPackage column type of each property type (a date as ISO 8601 text, GeoPackage's DATETIME). */
const COLUMN_TYPES: Record<PropertyType, string> = {
  integer: 'INTEGER',
  number: 'DOUBLE',
  boolean: 'BOOLEAN',
  date: 'DATETIME',
  string: 'TEXT',
};

const FIXED_COLUMNS = ['fid', 'geom', 'title', 'event_timestamp', 'dataset', 'catalog', 'data', 'provenance'];

const identifier = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** A typed value as SQLite stores it (a boolean as 1 or 0). */
function sqliteValue(value: unknown): string | number | null {
  if (typeof value === 'boolean') return value ? 1 : 0;
  return typeof value === 'number' || typeof value === 'string' ? value : null;
}

/**
 * Writes the features of `sequence` into a new GeoPackage at `file` (which must not exist), with a
 * column of its type for each typed property (`fields`).
 */
export async function writeGeoPackage(
  file: string,
  sequence: AsyncIterable<string>,
  fields: readonly PropertyField[],
): Promise<void> {
  const typed = typedColumns(FIXED_COLUMNS, fields);
  const database = new DatabaseSync(file);
  try {
    // One writer, a file nobody reads until it is renamed: no journal, no waiting for the disk
    // (the file store syncs the finished file before it gets its name).
    database.exec(`pragma application_id = ${APPLICATION_ID}; pragma user_version = ${USER_VERSION};
      pragma journal_mode = off; pragma synchronous = off;`);
    const columns = typed.map(({ field, column }) => `, ${identifier(column)} ${COLUMN_TYPES[field.type]}`);
    database.exec(`create table events (fid integer primary key autoincrement, geom point, title text,
      event_timestamp datetime, dataset text, catalog text, data text, provenance text${columns.join('')})`);
    database.exec(SCHEMA);
    database.exec('begin');
    const names = [...FIXED_COLUMNS, ...typed.map(({ column }) => column)];
    const insert = database.prepare(
      `insert into events (${names.map(identifier).join(', ')}) values (${names.map(() => '?').join(', ')})`,
    );
    const extent = new Extent();
    for await (const feature of records(sequence)) {
      const point = feature.geometry?.coordinates ?? null;
      if (point) extent.add(point);
      const { title, eventTimestamp, dataset, catalog, data } = feature.properties;
      insert.run(
        feature.id,
        point ? pointBlob(point[0], point[1]) : null,
        title,
        eventTimestamp,
        dataset,
        catalog,
        JSON.stringify(data),
        provenanceText(feature),
        ...typed.map(({ field }) => sqliteValue(feature.properties[field.name])),
      );
    }
    const [minX, minY, maxX, maxY] = extent.box() ?? [null, null, null, null];
    database
      .prepare('update gpkg_contents set min_x = ?, min_y = ?, max_x = ?, max_y = ? where table_name = ?')
      .run(minX, minY, maxX, maxY, 'events');
    database.exec('commit');
  } finally {
    database.close();
  }
}
