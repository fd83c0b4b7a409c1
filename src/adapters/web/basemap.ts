import { layers, namedFlavor } from '@protomaps/basemaps';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Font } from 'opentype.js';
import type { BasemapArchive } from '../files/basemap-archive.ts';
import { glyphRange, readFont } from '../files/sdf-glyphs.ts';
import { REVALIDATE, sendStaticFile, staticFile } from './static-files.ts';

// The offline basemap of the Explore page (docs/explore.md, "The base map"): the operator's PMTiles
// archive (MAP_BASEMAP_PMTILES) answered in the byte ranges the browser's PMTiles reader asks for,
// the Protomaps style drawn from it (`@protomaps/basemaps`), and the glyphs its labels (and the
// default map's place names) are drawn with, made from a font Debian ships. Nothing the map needs
// comes from another machine.

const BASEMAP_ARCHIVE_URL = '/basemap/basemap.pmtiles';
export const BASEMAP_STYLE_URL = '/basemap/style.json';
export const GLYPHS_URL = '/basemap/glyphs/{fontstack}/{range}.pbf';

/** fonts-dejavu-core (scripts/install-system-packages, the service image). */
const FONT_DIR = '/usr/share/fonts/truetype/dejavu';
export const FONTS = { regular: 'DejaVu Sans Book', bold: 'DejaVu Sans Bold' } as const;
const FONT_FILES = { regular: 'DejaVuSans.ttf', bold: 'DejaVuSans-Bold.ttf' } as const;

/** The archive's answers may be kept a day; a replaced archive (after a restart) has a new ETag. */
const ARCHIVE_CACHE = 'public, max-age=86400';

type ByteRange = { start: number; end: number };

/**
 * A `Range` header against a file of `size` bytes: one range (`bytes=a-b`, `bytes=a-`, `bytes=-n`),
 * 'unsatisfiable' for a range past the end (416), undefined for no header or one this server does not
 * serve in part (several ranges, other units, a malformed one), which RFC 9110 answers with the whole.
 */
export function parseByteRange(
  header: string | undefined,
  size: number,
): ByteRange | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  // 15 digits stay exact in a double; a longer number is no offset into a real file.
  const match = /^bytes=(\d{0,15})-(\d{0,15})$/.exec(header.trim());
  if (!match) return undefined;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  if (last !== '' && Number(last) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end: last === '' ? size - 1 : Math.min(Number(last), size - 1) };
}

/** Whether `If-Range` (an ETag or a date) still names the file; when not, the whole file is sent. */
function ifRangeHolds(request: FastifyRequest, archive: BasemapArchive): boolean {
  const ifRange = request.headers['if-range'];
  if (typeof ifRange !== 'string') return true;
  if (ifRange.startsWith('"') || ifRange.startsWith('W/')) return ifRange === archive.etag;
  const date = Date.parse(ifRange);
  return !Number.isNaN(date) && Math.floor(archive.lastModified.getTime() / 1000) * 1000 <= date;
}

function sendArchive(request: FastifyRequest, reply: FastifyReply, archive: BasemapArchive): FastifyReply {
  reply
    .header('Accept-Ranges', 'bytes')
    .header('ETag', archive.etag)
    .header('Last-Modified', archive.lastModified.toUTCString())
    .header('Cache-Control', ARCHIVE_CACHE)
    .header('X-Content-Type-Options', 'nosniff')
    .type('application/vnd.pmtiles');
  if (request.headers['if-none-match'] === archive.etag) return reply.status(304).send();
  const range = ifRangeHolds(request, archive)
    ? parseByteRange(request.headers.range, archive.size)
    : undefined;
  if (range === 'unsatisfiable') {
    return reply.status(416).header('Content-Range', `bytes */${archive.size}`).send();
  }
  if (!range) {
    reply.header('Content-Length', String(archive.size));
    return reply.send(archive.size === 0 ? '' : archive.read(0, archive.size - 1));
  }
  return reply
    .status(206)
    .header('Content-Range', `bytes ${range.start}-${range.end}/${archive.size}`)
    .header('Content-Length', String(range.end - range.start + 1))
    .send(archive.read(range.start, range.end));
}

type StyleLayer = { id: string; layout?: Record<string, unknown>; paint?: Record<string, unknown> };

/**
 * The Protomaps "light" style for our archive and glyphs. Its icons (points of interest, town dots,
 * road shields, one-way arrows) come from a sprite sheet that no npm package ships, so the layers
 * drawn only as icons are left out and the others keep their text (docs/explore.md).
 */
function basemapStyle(): Record<string, unknown> {
  const flavor = { ...namedFlavor('light'), regular: FONTS.regular, bold: FONTS.bold, italic: FONTS.regular };
  const drawn: StyleLayer[] = [];
  for (const layer of layers('protomaps', flavor, { lang: 'en' }) as StyleLayer[]) {
    const layout = layer.layout ?? {};
    if (!('icon-image' in layout)) {
      drawn.push(layer);
      continue;
    }
    if (!('text-field' in layout) || layer.id === 'roads_shields') continue; // a shield's number alone says little
    const textOnly = Object.fromEntries(Object.entries(layout).filter(([key]) => !key.startsWith('icon-')));
    const paint = Object.fromEntries(
      Object.entries(layer.paint ?? {}).filter(([key]) => !key.startsWith('icon-')),
    );
    drawn.push({ ...layer, layout: textOnly, paint });
  }
  return {
    version: 8,
    glyphs: GLYPHS_URL,
    sources: {
      protomaps: {
        type: 'vector',
        url: `pmtiles://${BASEMAP_ARCHIVE_URL}`,
        attribution:
          '<a href="https://protomaps.com">Protomaps</a> © <a href="https://openstreetmap.org">OpenStreetMap</a>',
      },
    },
    layers: drawn,
  };
}

/** The font for a font stack's name: the bold face for bold and medium names, else the regular. */
function faceOf(fontstack: string): keyof typeof FONT_FILES {
  return /bold|medium|semibold|black|heavy/i.test(fontstack) ? 'bold' : 'regular';
}

type BasemapOptions = { archive: BasemapArchive | undefined };

export async function basemapRoutes(app: FastifyInstance, options: BasemapOptions): Promise<void> {
  const { archive } = options;
  app.get(BASEMAP_ARCHIVE_URL, { schema: { hide: true } }, async (request, reply) => {
    if (!archive)
      return reply.status(404).send({ error: 'Not Found', message: 'No basemap archive is configured' });
    return sendArchive(request, reply, archive);
  });

  const style = archive
    ? staticFile(Buffer.from(JSON.stringify(basemapStyle())), 'application/json; charset=utf-8', REVALIDATE)
    : undefined;
  app.get(BASEMAP_STYLE_URL, { schema: { hide: true } }, async (request, reply) => {
    if (!style)
      return reply.status(404).send({ error: 'Not Found', message: 'No basemap archive is configured' });
    return sendStaticFile(request, reply, style);
  });

  // Each range is made on first request and kept: 256 ranges of two faces at most, most of them
  // empty (DejaVu Sans covers Latin, Greek, Cyrillic and some more).
  const fonts = new Map<keyof typeof FONT_FILES, Font | undefined>();
  const ranges = new Map<string, ReturnType<typeof staticFile>>();
  app.get<{ Params: { fontstack: string; range: string } }>(
    '/basemap/glyphs/:fontstack/:range',
    { schema: { hide: true } },
    async (request, reply) => {
      const { fontstack, range } = request.params;
      const match = /^(\d{1,5})-(\d{1,5})\.pbf$/.exec(range);
      const start = Number(match?.[1]);
      const valid =
        match &&
        start % 256 === 0 &&
        start <= 65_280 &&
        Number(match[2]) === start + 255 &&
        fontstack.length <= 200;
      const face = faceOf(fontstack);
      if (!fonts.has(face)) fonts.set(face, readFont(`${FONT_DIR}/${FONT_FILES[face]}`));
      const font = fonts.get(face);
      if (!valid || !font)
        return reply.status(404).send({ error: 'Not Found', message: 'No such glyph range' });
      const key = `${face}:${start}`;
      let file = ranges.get(key);
      if (!file) {
        file = staticFile(
          Buffer.from(glyphRange(font, FONTS[face], start)),
          'application/x-protobuf',
          REVALIDATE,
        );
        ranges.set(key, file);
      }
      return sendStaticFile(request, reply, file);
    },
  );
}
