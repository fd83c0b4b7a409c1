import { closeSync, createReadStream, openSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';

// The operator's PMTiles basemap archive (MAP_BASEMAP_PMTILES): checked once at start-up, then read
// in the byte ranges the browser's PMTiles reader asks for (src/adapters/web/basemap.ts).

export type BasemapArchive = {
  size: number;
  /** A strong validator: the file's size and modification time (a replaced archive gets a new one). */
  etag: string;
  lastModified: Date;
  /** The bytes from `start` to `end`, both included. */
  read(start: number, end: number): Readable;
};

/**
 * The archive's absolute path, once it is seen to be a PMTiles v3 file of vector tiles whose
 * directories the browser can read (gzip or none); throws a message for the configuration error.
 */
export function checkPmtilesArchive(raw: string): string {
  const file = path.resolve(raw);
  const header = Buffer.alloc(127);
  let read = 0;
  try {
    const fd = openSync(file, 'r');
    try {
      read = readSync(fd, header, 0, header.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    throw new Error(`cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (read < header.length || header.toString('latin1', 0, 7) !== 'PMTiles') {
    throw new Error(`${file} is not a PMTiles archive`);
  }
  if (header[7] !== 3) throw new Error(`${file} is PMTiles version ${header[7]}; version 3 is needed`);
  // Internal compression (directories) 1 = none, 2 = gzip: the two a browser decompresses itself.
  if (header[97] !== 1 && header[97] !== 2)
    throw new Error(`${file}: directories must be gzip or uncompressed`);
  if (header[99] !== 1) throw new Error(`${file} must hold vector tiles (MVT), like the Protomaps basemap`);
  return file;
}

export function basemapArchive(file: string): BasemapArchive {
  const stats = statSync(file);
  return {
    size: stats.size,
    etag: `"${stats.size.toString(36)}-${Math.floor(stats.mtimeMs).toString(36)}"`,
    lastModified: stats.mtime,
    read: (start, end) => createReadStream(file, { start, end }),
  };
}
