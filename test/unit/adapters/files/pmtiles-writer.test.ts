import { gzipSync } from 'node:zlib';
import { Compression, PMTiles, type RangeResponse, type Source, TileType } from 'pmtiles';
import t from 'tap';
import { writePmtiles, type PmtilesTile } from '../../../../src/adapters/files/pmtiles-writer.ts';

// The writer is checked by the reader the browser uses: the npm `pmtiles` package opens what it
// wrote and finds every tile, its header fields and its metadata.

/** A `pmtiles` Source over bytes in memory. */
class BufferSource implements Source {
  readonly bytes: Buffer;
  constructor(bytes: Buffer) {
    this.bytes = bytes;
  }
  getKey() {
    return 'memory';
  }
  async getBytes(offset: number, length: number): Promise<RangeResponse> {
    const slice = this.bytes.subarray(offset, offset + length);
    return { data: slice.buffer.slice(slice.byteOffset, slice.byteOffset + slice.length) as ArrayBuffer };
  }
}

const tileBytes = (text: string) => new Uint8Array(Buffer.from(text));
const text = (data: ArrayBuffer | undefined) => (data ? Buffer.from(data).toString() : undefined);

t.test('a small archive reads back: header, metadata, every tile, nothing else', async (t) => {
  const tiles: PmtilesTile[] = [
    { z: 0, x: 0, y: 0, data: tileBytes('world') },
    { z: 1, x: 1, y: 0, data: tileBytes('north-east') },
    { z: 1, x: 0, y: 1, data: tileBytes('south-west') },
    { z: 2, x: 3, y: 3, data: tileBytes('corner') },
  ];
  const archive = writePmtiles(tiles, {
    tileType: 'mvt',
    tileCompression: 'none',
    metadata: { name: 'test', vector_layers: [{ id: 'earth', fields: {} }] },
    bounds: [-10, -20, 30, 40],
    center: [5, 10, 1],
  });
  const reader = new PMTiles(new BufferSource(archive));
  const header = await reader.getHeader();
  t.equal(header.specVersion, 3);
  t.equal(header.tileType, TileType.Mvt);
  t.equal(header.tileCompression, Compression.None);
  t.equal(header.internalCompression, Compression.Gzip);
  t.equal(header.minZoom, 0);
  t.equal(header.maxZoom, 2);
  t.same([header.minLon, header.minLat, header.maxLon, header.maxLat], [-10, -20, 30, 40]);
  t.same([header.centerLon, header.centerLat, header.centerZoom], [5, 10, 1]);
  t.equal(header.numAddressedTiles, 4);
  t.equal(header.numTileContents, 4);
  t.ok(header.clustered);
  t.same(await reader.getMetadata(), { name: 'test', vector_layers: [{ id: 'earth', fields: {} }] });
  for (const { z, x, y, data } of tiles) {
    t.equal(text((await reader.getZxy(z, x, y))?.data), Buffer.from(data).toString(), `${z}/${x}/${y}`);
  }
  t.equal(await reader.getZxy(1, 0, 0), undefined, 'a tile not written is absent');
  t.equal(await reader.getZxy(3, 7, 7), undefined, 'so is one past the deepest zoom');
});

t.test('tiles with the same bytes are stored once; runs of them take one entry', async (t) => {
  const ocean = tileBytes('ocean'.repeat(20));
  const tiles: PmtilesTile[] = [];
  for (let x = 0; x < 8; x += 1) for (let y = 0; y < 8; y += 1) tiles.push({ z: 3, x, y, data: ocean });
  tiles.push({ z: 3, x: 4, y: 4, data: tileBytes('island') }); // replaces the ocean tile there
  const archive = writePmtiles(tiles, { tileType: 'png', tileCompression: 'none' });
  const reader = new PMTiles(new BufferSource(archive));
  const header = await reader.getHeader();
  t.equal(header.numAddressedTiles, 64);
  t.equal(header.numTileContents, 2);
  t.ok(header.numTileEntries < 64, `${header.numTileEntries} entries for 64 tiles`);
  t.ok(archive.length < 127 + 200 + 100 + 20, `${archive.length} bytes`);
  t.equal(text((await reader.getZxy(3, 4, 4))?.data), 'island');
  t.equal(text((await reader.getZxy(3, 7, 0))?.data), 'ocean'.repeat(20));
  t.equal(text((await reader.getZxy(3, 0, 7))?.data), 'ocean'.repeat(20));
});

t.test('many distinct tiles go into leaf directories the reader follows', async (t) => {
  // 20,000 different tiles scattered over zoom 12 (a fixed pseudo-random walk): their ids' deltas
  // do not compress, so the directory is far larger than 16 KiB.
  const tiles: PmtilesTile[] = [];
  let seed = 7;
  const next = () => (seed = (seed * 48_271) % 2_147_483_647);
  while (tiles.length < 20_000) {
    const [x, y] = [next() % 4096, next() % 4096];
    tiles.push({ z: 12, x, y, data: tileBytes(`${x}/${y}`.repeat(1 + (next() % 3))) });
  }
  const archive = writePmtiles(tiles, { tileType: 'mvt', tileCompression: 'none' });
  t.ok(archive.readBigUInt64LE(48) > 0n, 'leaf directories written');
  t.ok(Number(archive.readBigUInt64LE(16)) + 127 <= 16_384, 'header and root within 16 KiB');
  const source = new BufferSource(archive);
  const reader = new PMTiles(source);
  const header = await reader.getHeader();
  t.ok(header.numTileEntries > 19_000, `${header.numTileEntries} entries`);
  for (const { x, y, data } of [tiles[0]!, tiles[9_999]!, tiles[19_999]!]) {
    t.equal(text((await reader.getZxy(12, x, y))?.data), Buffer.from(data).toString());
  }
});

t.test('gzip tiles are declared so and come back decompressed; bad input is refused', async (t) => {
  const archive = writePmtiles([{ z: 0, x: 0, y: 0, data: gzipSync('hello') }], {
    tileType: 'mvt',
    tileCompression: 'gzip',
  });
  const reader = new PMTiles(new BufferSource(archive));
  t.equal((await reader.getHeader()).tileCompression, Compression.Gzip);
  t.equal(text((await reader.getZxy(0, 0, 0))?.data), 'hello');
  t.throws(() => writePmtiles([], { tileType: 'mvt', tileCompression: 'none' }), RangeError);
  t.throws(
    () =>
      writePmtiles([{ z: 1, x: 2, y: 0, data: tileBytes('x') }], {
        tileType: 'mvt',
        tileCompression: 'none',
      }),
    /out of bounds|outside|range/i,
  );
});
