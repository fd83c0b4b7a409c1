import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { Compression, TileType, zxyToTileId } from 'pmtiles';

// A PMTiles v3 archive writer (spec: github.com/protomaps/PMTiles, spec/v3/spec.md). The npm
// `pmtiles` package reads archives but writes none (docs/decisions.md, "PMTiles"), so this module
// lays one out: the 127-byte header, the root directory (and leaf directories when the root would
// not fit in the first 16 KiB), the JSON metadata and the tile data, tiles with the same bytes
// stored once. Tiles are written in tile-id order (the Hilbert order the spec's "clustered" flag
// promises), so a reader fetches a region's tiles in few ranges. The tile id function is the
// reader's own (`zxyToTileId`), so writer and reader cannot disagree on it.
//
// The archive is built in memory: the basemap tests' archives are small, and a PMTiles export of a
// view is capped in tiles (application/read/export-tile-archive.ts, EXPORT_PMTILES_MAX_TILES). An
// export of millions of tiles would stream the tile data to a file first (the directories must still
// be known before the header is written).

export type PmtilesTile = { z: number; x: number; y: number; data: Uint8Array };

export type PmtilesOptions = {
  tileType: 'mvt' | 'png' | 'jpeg' | 'webp' | 'avif';
  /** How the caller compressed each tile's bytes (the writer stores them as given). */
  tileCompression: 'none' | 'gzip';
  /** The archive's JSON metadata (for vector tiles: `vector_layers`, attribution, ...). */
  metadata?: Record<string, unknown>;
  /** [west, south, east, north] in degrees; the whole world when absent. */
  bounds?: [number, number, number, number];
  /** [longitude, latitude, zoom]; the middle of the bounds at the lowest zoom when absent. */
  center?: [number, number, number];
};

const HEADER_BYTES = 127;
/** The spec asks for the header and root directory in the first 16 KiB: one request opens the archive. */
const ROOT_LIMIT = 16_384 - HEADER_BYTES;

const TILE_TYPES = {
  mvt: TileType.Mvt,
  png: TileType.Png,
  jpeg: TileType.Jpeg,
  webp: TileType.Webp,
  avif: TileType.Avif,
} as const;
const COMPRESSIONS = { none: Compression.None, gzip: Compression.Gzip } as const;

type Entry = { tileId: number; offset: number; length: number; runLength: number };

/** Unsigned LEB128, in arithmetic: tile ids and offsets go past 2^32, where bit operators break. */
function pushVarint(bytes: number[], value: number): void {
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  bytes.push(rest);
}

/** A directory as the spec lays it out: columns of varints, ids as deltas, contiguous offsets as 0. */
function serializeDirectory(entries: Entry[]): Buffer {
  const bytes: number[] = [];
  pushVarint(bytes, entries.length);
  let lastId = 0;
  for (const entry of entries) {
    pushVarint(bytes, entry.tileId - lastId);
    lastId = entry.tileId;
  }
  for (const entry of entries) pushVarint(bytes, entry.runLength);
  for (const entry of entries) pushVarint(bytes, entry.length);
  entries.forEach((entry, index) => {
    const previous = entries[index - 1];
    const contiguous = previous !== undefined && entry.offset === previous.offset + previous.length;
    pushVarint(bytes, contiguous ? 0 : entry.offset + 1);
  });
  return gzipSync(Buffer.from(bytes));
}

/**
 * The root directory, and the leaf directories when the root alone would pass 16 KiB: leaves of
 * `leafSize` entries, the size grown until the root of pointers to them fits (go-pmtiles' rule).
 */
function directories(entries: Entry[]): { root: Buffer; leaves: Buffer } {
  const root = serializeDirectory(entries);
  if (root.length <= ROOT_LIMIT) return { root, leaves: Buffer.alloc(0) };
  for (let leafSize = 4096; ; leafSize = Math.ceil(leafSize * 1.2)) {
    const pointers: Entry[] = [];
    const leaves: Buffer[] = [];
    let offset = 0;
    for (let start = 0; start < entries.length; start += leafSize) {
      const leaf = serializeDirectory(entries.slice(start, start + leafSize));
      pointers.push({ tileId: entries[start]!.tileId, offset, length: leaf.length, runLength: 0 });
      leaves.push(leaf);
      offset += leaf.length;
    }
    const pointerRoot = serializeDirectory(pointers);
    if (pointerRoot.length <= ROOT_LIMIT) return { root: pointerRoot, leaves: Buffer.concat(leaves) };
  }
}

/** Degrees as the header's signed 32-bit integers of 10^-7 degrees. */
const e7 = (degrees: number) => Math.round(degrees * 1e7);

function header(fields: {
  sections: Array<[offset: number, length: number]>;
  addressed: number;
  entries: number;
  contents: number;
  options: PmtilesOptions;
  minZoom: number;
  maxZoom: number;
}): Buffer {
  const out = Buffer.alloc(HEADER_BYTES);
  out.write('PMTiles', 0, 'latin1');
  out.writeUInt8(3, 7);
  // Root directory, metadata, leaf directories, tile data: offset and length each.
  fields.sections.forEach(([offset, length], index) => {
    out.writeBigUInt64LE(BigInt(offset), 8 + index * 16);
    out.writeBigUInt64LE(BigInt(length), 16 + index * 16);
  });
  out.writeBigUInt64LE(BigInt(fields.addressed), 72);
  out.writeBigUInt64LE(BigInt(fields.entries), 80);
  out.writeBigUInt64LE(BigInt(fields.contents), 88);
  out.writeUInt8(1, 96); // clustered: contents in tile-id order
  out.writeUInt8(Compression.Gzip, 97); // directories and metadata
  out.writeUInt8(COMPRESSIONS[fields.options.tileCompression], 98);
  out.writeUInt8(TILE_TYPES[fields.options.tileType], 99);
  out.writeUInt8(fields.minZoom, 100);
  out.writeUInt8(fields.maxZoom, 101);
  const [west, south, east, north] = fields.options.bounds ?? [-180, -85.0511287, 180, 85.0511287];
  out.writeInt32LE(e7(west), 102);
  out.writeInt32LE(e7(south), 106);
  out.writeInt32LE(e7(east), 110);
  out.writeInt32LE(e7(north), 114);
  const [lon, lat, zoom] = fields.options.center ?? [(west + east) / 2, (south + north) / 2, fields.minZoom];
  out.writeUInt8(zoom, 118);
  out.writeInt32LE(e7(lon), 119);
  out.writeInt32LE(e7(lat), 123);
  return out;
}

/** One PMTiles v3 archive holding `tiles` (a later tile at the same z/x/y replaces an earlier one). */
export function writePmtiles(tiles: Iterable<PmtilesTile>, options: PmtilesOptions): Buffer {
  const byId = new Map<number, Uint8Array>();
  let minZoom = Infinity;
  let maxZoom = -Infinity;
  for (const { z, x, y, data } of tiles) {
    // zxyToTileId checks z, x and y and throws a RangeError outside the tile pyramid.
    byId.set(zxyToTileId(z, x, y), data);
    minZoom = Math.min(minZoom, z);
    maxZoom = Math.max(maxZoom, z);
  }
  if (byId.size === 0) throw new RangeError('a PMTiles archive needs at least one tile');

  const contents: Uint8Array[] = [];
  const stored = new Map<string, { offset: number; length: number }>();
  const entries: Entry[] = [];
  let dataLength = 0;
  for (const tileId of [...byId.keys()].sort((a, b) => a - b)) {
    const data = byId.get(tileId)!;
    const hash = createHash('sha256').update(data).digest('base64');
    let place = stored.get(hash);
    if (!place) {
      place = { offset: dataLength, length: data.length };
      stored.set(hash, place);
      contents.push(data);
      dataLength += data.length;
    }
    const last = entries.at(-1);
    // A run: the next tile id with the same bytes as the entry before it (an ocean, say).
    if (last && last.offset === place.offset && last.tileId + last.runLength === tileId) last.runLength += 1;
    else entries.push({ tileId, ...place, runLength: 1 });
  }

  const { root, leaves } = directories(entries);
  const metadata = gzipSync(Buffer.from(JSON.stringify(options.metadata ?? {})));
  const rootOffset = HEADER_BYTES;
  const metadataOffset = rootOffset + root.length;
  const leavesOffset = metadataOffset + metadata.length;
  const dataOffset = leavesOffset + leaves.length;
  const head = header({
    sections: [
      [rootOffset, root.length],
      [metadataOffset, metadata.length],
      [leavesOffset, leaves.length],
      [dataOffset, dataLength],
    ],
    addressed: byId.size,
    entries: entries.length,
    contents: contents.length,
    options,
    minZoom,
    maxZoom,
  });
  return Buffer.concat([head, root, metadata, leaves, ...contents]);
}

/** The archive of `tiles` written to `path` (a new file: an export's slot, export-file-store.ts). */
export async function writePmtilesFile(
  path: string,
  tiles: Iterable<PmtilesTile>,
  options: PmtilesOptions,
): Promise<void> {
  await writeFile(path, writePmtiles(tiles, options), { flag: 'wx', mode: 0o600 });
}
