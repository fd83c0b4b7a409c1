import type { ExportEncoder } from '../../ports/read/export-files.ts';
import { writeGeoPackage } from './geopackage-writer.ts';

/** The file formats of the exports (docs/api-v1.md, "Exports"), each written by its library. */
export const exportEncoders: ExportEncoder = {
  async encode(format, sequence, path) {
    if (format === 'gpkg') return writeGeoPackage(path, sequence);
    throw new Error(`no encoder for ${String(format)}`);
  },
};
