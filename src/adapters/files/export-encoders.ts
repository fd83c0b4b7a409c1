import { gzipSync } from 'node:zlib';
import type { ExportEncoder } from '../../ports/read/export-files.ts';
import { writeFlatGeobuf } from './flatgeobuf-writer.ts';
import { writeGeoPackage } from './geopackage-writer.ts';
import { writeGeoParquet } from './geoparquet-writer.ts';
import { writePmtilesFile } from './pmtiles-writer.ts';

/** The file formats of the exports (docs/api-v1.md, "Exports"), each written by its library. */
export const exportEncoders: ExportEncoder = {
  async encode(format, sequence, path, fields) {
    if (format === 'gpkg') return writeGeoPackage(path, sequence, fields);
    if (format === 'fgb') return writeFlatGeobuf(path, sequence, fields);
    if (format === 'parquet') return writeGeoParquet(path, sequence, fields);
    throw new Error(`no encoder for ${String(format)}`);
  },
  async encodeTiles(tiles, path, metadata) {
    // Tiles gzipped, as PMTiles readers expect vector tiles (the pmtiles package inflates them).
    const zipped = tiles.map((tile) => ({ ...tile, data: gzipSync(tile.data) }));
    const zooms = tiles.map((tile) => tile.z);
    await writePmtilesFile(path, zipped, {
      tileType: 'mvt',
      tileCompression: 'gzip',
      metadata: {
        name: metadata.name,
        description: metadata.description,
        version: metadata.version,
        vector_layers: [
          {
            id: metadata.layer,
            fields: metadata.fields,
            minzoom: Math.min(...zooms),
            maxzoom: Math.max(...zooms),
          },
        ],
      },
    });
  },
};
