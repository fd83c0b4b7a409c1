import type { PropertyField } from '../../domain/read/typed-properties.ts';

// Materialised exports (docs/api-v1.md, "Exports"): an export of a view, written once per data
// version as a file, so that a repeated download costs a file read and every download can be read by
// range. The key names everything the file's bytes depend on (format, sort, filter, the datasets the
// viewer may read and their data versions: application/read/export-events.ts#exportKey); the store
// keeps the files under a total byte cap, least recently used out first.

/** Formats written as whole files by a library (from the export's GeoJSON text sequence), never streamed. */
export type FileFormat = 'gpkg' | 'fgb' | 'parquet';

/**
 * Writes a file format from an export's GeoJSON text sequence (RFC 8142 records, in pieces). `fields`
 * are the typed properties the features carry (an export of one dataset; none otherwise), which the
 * file gets as typed columns.
 */
export interface ExportEncoder {
  encode(
    format: FileFormat,
    sequence: AsyncIterable<string>,
    path: string,
    fields: readonly PropertyField[],
  ): Promise<void>;
  /** Writes a PMTiles archive of vector tiles (MVT, as the tile renderer gives them) to `path`. */
  encodeTiles(tiles: readonly ArchiveTile[], path: string, metadata: TileArchiveMetadata): Promise<void>;
}

/** A vector tile of a view (application/read/export-tile-archive.ts). */
export type ArchiveTile = { z: number; x: number; y: number; data: Uint8Array };

/** What a tile archive says about itself: its name, its layer and its fields, the data version. */
type TileArchiveMetadata = {
  name: string;
  description: string;
  layer: string;
  fields: Record<string, string>;
  version: string;
};

export type ExportFile = {
  /** Where the file is, to be read (and read by range) by the HTTP adapter. */
  path: string;
  bytes: number;
};

/** A file being written; it becomes findable only when committed whole. */
export interface ExportFileWriter {
  /** Text is written as UTF-8; bytes (a compressed copy) as they are. */
  write(chunk: string | Uint8Array): Promise<void>;
  /** Makes the file findable under its key (then evicts what the byte cap requires). */
  commit(): Promise<ExportFile>;
  /** Drops what was written (a failed or abandoned export). */
  abort(): Promise<void>;
}

/** A place for a file that a library writes itself (a GeoPackage); findable only when committed. */
export interface ExportFileSlot {
  /** Where to write: a path that does not exist yet, in the store's directory. */
  path: string;
  commit(): Promise<ExportFile>;
  abort(): Promise<void>;
}

export interface ExportFileStore {
  /** The committed file of `key`, marked as just used; null when there is none (never written, or evicted). */
  find(key: string): Promise<ExportFile | null>;
  /** A writer for `key`; two writers of one key may run at once (the last commit wins: same bytes). */
  create(key: string): Promise<ExportFileWriter>;
  /** A slot for `key` that the caller writes a file into; the same rules as `create`. */
  reserve(key: string): Promise<ExportFileSlot>;
  /** Removes every kept file (after a restore, whose data versions may repeat ones files were kept at). */
  clear(): Promise<void>;
}
