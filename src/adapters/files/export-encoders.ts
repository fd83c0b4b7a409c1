import type { ExportEncoder } from '../../ports/read/export-files.ts';
import { writeFlatGeobuf } from './flatgeobuf-writer.ts';
import { writeGeoPackage } from './geopackage-writer.ts';
import { writeGeoParquet } from './geoparquet-writer.ts';

/** The file formats of the exports (docs/api-v1.md, "Exports"), each written by its library. */
export const exportEncoders: ExportEncoder = {
  async encode(format, sequence, path, fields) {
    if (format === 'gpkg') return writeGeoPackage(path, sequence, fields);
    if (format === 'fgb') return writeFlatGeobuf(path, sequence, fields);
    if (format === 'parquet') return writeGeoParquet(path, sequence, fields);
    throw new Error(`no encoder for ${String(format)}`);
  },
};
