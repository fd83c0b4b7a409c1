import { CURSOR_SORT_FIELDS, cursorSortField } from '../../domain/read/event-cursor.ts';
import { DomainError } from '../../domain/errors.ts';
import {
  type EventFilter,
  invalid,
  parseEventFilter,
  type RawQuery,
  type Sort,
} from '../../domain/read/read-query.ts';
import { parseEventSort } from '../../domain/read/sort.ts';
import type { EventExport, EventExporter, ExportFormat } from '../../ports/read/event-exporter.ts';
import type {
  ExportEncoder,
  ExportFile,
  ExportFileStore,
  ExportFileWriter,
  FileFormat,
} from '../../ports/read/export-files.ts';
import type { Viewer } from '../../ports/read/event-reader.ts';
import type { TileReader } from '../../ports/read/tile-reader.ts';
import { TILE_ARCHIVE_MAX_TILES, TILE_ARCHIVE_MAX_ZOOM, viewTiles } from './export-tile-archive.ts';
import { TILE_LAYER } from '../../domain/read/tiles.ts';
import type { ExportJob } from '../../ports/read/export-jobs.ts';
import { type BackgroundExports, startBackgroundExport } from './background-exports.ts';

export const EXPORT_DEFAULT_SORT = 'id';

/** What /api/v1/events.<format> offers: the text formats the exporter streams, and the file formats. */
export type DownloadFormat = ExportFormat | FileFormat | 'pmtiles';

/** What an export needs: the exporter, and for the kept formats the file store, encoders and tiles. */
type ExportDeps = {
  exporter: EventExporter;
  files?: ExportFileStore;
  encoder?: ExportEncoder;
  /** The tile renderer of /api/v1/tiles (the PMTiles export draws its tiles). */
  tiles?: TileReader;
  /** The PMTiles export's cap in tiles (EXPORT_PMTILES_MAX_TILES; default TILE_ARCHIVE_MAX_TILES). */
  maxArchiveTiles?: number;
  /** Large first exports of the kept-file formats as jobs (background-exports.ts). */
  background?: BackgroundExports;
};

/** How an export runs: `whole` writes the file before answering; `inJob` is the background job itself. */
type ExportOptions = { whole: boolean; inJob?: boolean; progress?: (written: number) => void };

/**
 * An export's answer: a file already written for this data version (`file`), or a fresh export
 * (`stream`) with the writer that keeps it as that file once it has streamed whole (null when no
 * file store is configured). `version` names the bytes: the answer's validator (ETag).
 */
type ExportAnswer =
  | { kind: 'file'; file: ExportFile; version: string }
  | { kind: 'stream'; text: EventExport; keep: ExportFileWriter | null; version: string }
  | { kind: 'job'; job: ExportJob; version: string };

/**
 * What a materialised export's bytes depend on: the format, the sort, the filter, and the data
 * version of what the viewer may read (the readable datasets and their versions, EventExporter.versionOf).
 * Two viewers who may read the same datasets share the file.
 */
function exportKey(format: DownloadFormat, sort: string, filter: EventFilter, version: string): string {
  return JSON.stringify([format, sort, filter, version]);
}

/**
 * GET /api/v1/events.geojson and /api/v1/events.csv: every event the filters of /events match (the
 * same parameters, the same visibility), in a sort keyset paging can walk (default id). With a file
 * store, an export is written once per data version: a repeated download reads the file; `whole`
 * (a range request or HEAD, which need the size) writes a missing file first, then answers it.
 */
export async function exportEvents(
  deps: ExportDeps,
  viewer: Viewer,
  query: RawQuery,
  format: DownloadFormat,
  options: ExportOptions = { whole: false },
): Promise<ExportAnswer> {
  const filter = parseEventFilter(query);
  // By id unless asked otherwise: insertion order, which is about the table's physical order, so
  // the batches read the heap sequentially (by time, the same rows cost a random read each).
  const sort = parseEventSort(query.sort ?? EXPORT_DEFAULT_SORT);
  if (cursorSortField(sort) === null)
    throw invalid(
      'sort',
      `an export is sorted by ${CURSOR_SORT_FIELDS.join(', ')} (with - for descending), not "${sort.text}"`,
    );
  const { exporter, files } = deps;
  // A tile archive does not depend on the sort: one key for every sort.
  const sortKey = format === 'pmtiles' ? 'tiles' : sort.text;
  let current: string | null = null;
  // The streamed formats' claim on their key while this export is written (released when its file
  // is committed or dropped); the kept-file formats are written whole before they answer.
  let release = () => {};
  if (files) {
    current = exportKey(format, sortKey, filter, await exporter.versionOf(viewer, filter));
    const found = await keptOrClaimed(files, current, format !== 'pmtiles' && !isFileFormat(format));
    if ('file' in found) return { kind: 'file', file: found.file, version: current };
    release = found.release;
  }
  // The kept-file formats answer only once the whole file is written: a large one is a job.
  if (
    current !== null &&
    deps.background &&
    !options.inJob &&
    (format === 'pmtiles' || isFileFormat(format))
  ) {
    const request = { viewer, filter, query, format, exportKey: current };
    const job = await startBackgroundExport(deps.background, request);
    if (job) return { kind: 'job', job, version: current };
  }
  if (format === 'pmtiles') return encodeTiles(deps, viewer, filter, current);
  if (isFileFormat(format)) {
    if (!files || !deps.encoder)
      throw new DomainError('unavailable', `${format} exports are kept files, and this server keeps none`, {
        code: 'EXPORT_FILES_OFF',
      });
    return encodeFile(deps.exporter, files, deps.encoder, viewer, filter, sort, format, options.progress);
  }
  const text = await exporter.exportEvents(viewer, filter, sort, format).catch((error: unknown) => {
    release();
    throw error;
  });
  // The key of what this export's snapshot holds (a write since the lookup above gives a newer one).
  const version = exportKey(format, sort.text, filter, text.version);
  if (!files) return { kind: 'stream', text, keep: null, version };
  const created = await files.create(version).catch(async (error: unknown) => {
    release();
    await text.batches[Symbol.asyncIterator]().return?.();
    throw error;
  });
  const keep = releasing(created, release);
  if (!options.whole) return { kind: 'stream', text, keep, version };
  return { kind: 'file', file: await writeWhole(text, keep), version };
}

/**
 * The streamed exports being written by this process, per store, by key: a promise settled when the
 * export's file is committed or dropped. Issue 37 §3: a download right after a fresh one of the same
 * view (a gzip one, then identity) came while the first's file was still being written (it is
 * committed after the answer's last byte) and exported the same bytes again; now it waits for that
 * file and reads it. One export per key at a time in a process; several processes sharing the
 * directory may still write one key twice (the store allows it: the last commit wins, same bytes).
 */
const writing = new WeakMap<ExportFileStore, Map<string, Promise<void>>>();

/**
 * The file kept under `key`; else, after waiting for an export of `key` in flight here to end, the
 * file it kept; else (when `claim`) a claim on `key`, taken in the same turn as the last lookup so
 * that two requests never both export it, whose `release` lets the waiters look again.
 */
async function keptOrClaimed(
  files: ExportFileStore,
  key: string,
  claim: boolean,
): Promise<{ file: ExportFile } | { release: () => void }> {
  let inFlight = writing.get(files);
  if (!inFlight) {
    inFlight = new Map();
    writing.set(files, inFlight);
  }
  for (;;) {
    const file = await files.find(key);
    if (file) return { file };
    const other = inFlight.get(key);
    if (other === undefined) break;
    await other;
  }
  if (!claim) return { release: () => {} };
  const claims = inFlight;
  let settle = () => {};
  const settled = new Promise<void>((resolve) => {
    settle = resolve;
  });
  claims.set(key, settled);
  return {
    release() {
      if (claims.get(key) === settled) claims.delete(key);
      settle();
    },
  };
}

/** `keep` that calls `release` once it is committed or aborted, however that ends. */
function releasing(keep: ExportFileWriter, release: () => void): ExportFileWriter {
  return {
    write: (chunk) => keep.write(chunk),
    commit: () => keep.commit().finally(release),
    abort: () => keep.abort().finally(release),
  };
}

const FILE_FORMATS: readonly string[] = ['gpkg', 'fgb', 'parquet'] satisfies FileFormat[];

function isFileFormat(format: DownloadFormat): format is FileFormat {
  return FILE_FORMATS.includes(format);
}

/** A file format, written whole from the export's GeoJSON text sequence into a slot of the store. */
async function encodeFile(
  exporter: EventExporter,
  files: ExportFileStore,
  encoder: ExportEncoder,
  viewer: Viewer,
  filter: EventFilter,
  sort: Sort,
  format: FileFormat,
  progress?: (written: number) => void,
): Promise<ExportAnswer> {
  const text = await exporter.exportEvents(viewer, filter, sort, 'geojsonseq');
  const version = exportKey(format, sort.text, filter, text.version);
  const slot = await files.reserve(version).catch(async (error: unknown) => {
    await text.batches[Symbol.asyncIterator]().return?.();
    throw error;
  });
  try {
    // A text sequence has no head, separator or tail: its batches are the whole text.
    await encoder.encode(format, counted(text.batches, progress), slot.path, text.fields ?? []);
    return { kind: 'file', file: await slot.commit(), version };
  } catch (error) {
    await slot.abort();
    throw error;
  }
}

/** The pieces of a GeoJSON text sequence, reporting the records passed on so far (a job's progress). */
async function* counted(
  sequence: AsyncIterable<string>,
  progress: ((written: number) => void) | undefined,
): AsyncGenerator<string> {
  let written = 0;
  for await (const piece of sequence) {
    if (progress) {
      for (let at = piece.indexOf('\x1e'); at !== -1; at = piece.indexOf('\x1e', at + 1)) written += 1;
      progress(written);
    }
    yield piece;
  }
}

/**
 * The PMTiles archive of the view (export-tile-archive.ts#viewTiles), written into a slot of the
 * store under `key` (the data version read before the first tile: a tile is never older than it).
 */
async function encodeTiles(
  deps: ExportDeps,
  viewer: Viewer,
  filter: EventFilter,
  key: string | null,
): Promise<ExportAnswer> {
  const { files, encoder, tiles } = deps;
  if (!files || !encoder || !tiles || key === null)
    throw new DomainError('unavailable', 'pmtiles exports are kept files, and this server keeps none', {
      code: 'EXPORT_FILES_OFF',
    });
  const drawn = await viewTiles(tiles, viewer, filter, {
    maxZoom: TILE_ARCHIVE_MAX_ZOOM,
    maxTiles: deps.maxArchiveTiles ?? TILE_ARCHIVE_MAX_TILES,
  });
  const slot = await files.reserve(key);
  try {
    await encoder.encodeTiles(drawn, slot.path, {
      name: 'Chronomap events',
      description: 'The vector tiles of a view of Chronomap events (GET /api/v1/events.pmtiles)',
      layer: TILE_LAYER,
      fields: {
        type: 'String',
        count: 'Number',
        id: 'Number',
        title: 'String',
        key: 'String',
        eventIds: 'String',
      },
      version: await tiles.dataVersion(),
    });
    return { kind: 'file', file: await slot.commit(), version: key };
  } catch (error) {
    await slot.abort();
    throw error;
  }
}

/** Writes a whole export into `keep` and commits it; drops it if the export fails. */
async function writeWhole(text: EventExport, keep: ExportFileWriter): Promise<ExportFile> {
  try {
    await keep.write(text.head);
    let started = false;
    for await (const batch of text.batches) {
      if (started) await keep.write(text.separator);
      await keep.write(batch);
      started = true;
    }
    await keep.write(text.tail);
    return await keep.commit();
  } catch (error) {
    await keep.abort();
    throw error;
  }
}
