import { DatabaseSync } from 'node:sqlite';
import type { EventFeature } from '../../domain/read/event-feature.ts';

// A GeoPackage 1.3 file (OGC 12-128r18) of exported events, written with Node's own SQLite
// (node:sqlite): one feature table `events` with a POINT column in EPSG:4326, the fixed properties as
// columns and `data` as JSON text. The input is the GeoJSON text sequence of the export (RFC 8142
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
create table events (
  fid integer primary key autoincrement, geom point, title text, event_timestamp datetime, dataset text, catalog text,
  data text);
insert into gpkg_contents (table_name, data_type, identifier, description, srs_id)
  values ('events', 'features', 'events', 'Chronomap events', 4326);
insert into gpkg_geometry_columns values ('events', 'geom', 'POINT', 4326, 0, 0);
`;

/**
 * A point as a GeoPackage geometry blob: the 8-byte header ('GP', version 0, flags: little-endian,
 * no envelope — a point's envelope is the point), the SRS id, then the point as WKB.
 */
function pointBlob(longitude: number, latitude: number): Uint8Array {
  const blob = Buffer.alloc(8 + 21);
  blob.write('GP', 0, 'ascii');
  blob.writeUInt8(0, 2);
  blob.writeUInt8(0b0000_0001, 3); // binary type standard, envelope none, little endian
  blob.writeInt32LE(4326, 4);
  blob.writeUInt8(1, 8); // WKB little endian
  blob.writeUInt32LE(1, 9); // wkbPoint
  blob.writeDoubleLE(longitude, 13);
  blob.writeDoubleLE(latitude, 21);
  return blob;
}

/** The features of a GeoJSON text sequence, from text that arrives in pieces cut at record ends. */
async function* records(sequence: AsyncIterable<string>): AsyncGenerator<EventFeature> {
  for await (const piece of sequence) {
    for (const record of piece.split('\x1e')) {
      if (record.trim() !== '') yield JSON.parse(record) as EventFeature;
    }
  }
}

/** Writes the features of `sequence` into a new GeoPackage at `file` (which must not exist). */
export async function writeGeoPackage(file: string, sequence: AsyncIterable<string>): Promise<void> {
  const database = new DatabaseSync(file);
  try {
    // One writer, a file nobody reads until it is renamed: no journal, no waiting for the disk
    // (the file store syncs the finished file before it gets its name).
    database.exec(`pragma application_id = ${APPLICATION_ID}; pragma user_version = ${USER_VERSION};
      pragma journal_mode = off; pragma synchronous = off;`);
    database.exec(SCHEMA);
    database.exec('begin');
    const insert = database.prepare(
      'insert into events (fid, geom, title, event_timestamp, dataset, catalog, data) values (?, ?, ?, ?, ?, ?, ?)',
    );
    const extent = { minX: Infinity, minY: Infinity, maxX: -Infinity, maxY: -Infinity };
    for await (const feature of records(sequence)) {
      const point = feature.geometry?.coordinates ?? null;
      if (point) {
        extent.minX = Math.min(extent.minX, point[0]);
        extent.minY = Math.min(extent.minY, point[1]);
        extent.maxX = Math.max(extent.maxX, point[0]);
        extent.maxY = Math.max(extent.maxY, point[1]);
      }
      const { title, eventTimestamp, dataset, catalog, data } = feature.properties;
      insert.run(
        feature.id,
        point ? pointBlob(point[0], point[1]) : null,
        title,
        eventTimestamp,
        dataset,
        catalog,
        JSON.stringify(data),
      );
    }
    const bounds = Number.isFinite(extent.minX) ? extent : { minX: null, minY: null, maxX: null, maxY: null };
    database
      .prepare('update gpkg_contents set min_x = ?, min_y = ?, max_x = ?, max_y = ? where table_name = ?')
      .run(bounds.minX, bounds.minY, bounds.maxX, bounds.maxY, 'events');
    database.exec('commit');
  } finally {
    database.close();
  }
}
