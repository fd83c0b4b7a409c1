import { readFileSync } from 'node:fs';
import opentype, { type Font, type PathCommand } from 'opentype.js';
import { PbfWriter } from 'pbf';

// MapLibre draws text from signed distance fields of glyphs, fetched as protobuf files of 256 code
// points each (`{fontstack}/{start}-{end}.pbf`, the format of maplibre's glyphs.proto). No npm
// package makes them from a font without a native build (docs/decisions.md, "Basemap glyphs"), so
// this module does: opentype.js reads a TrueType font Debian ships and gives each glyph's outline;
// the distance of every pixel to the outline is measured exactly (the outline flattened into
// segments, inside by the non-zero winding rule, as fontnik does with FreeType's outlines); `pbf`
// writes the message.

/** MapLibre's glyph metrics: 24 px em, a 3 px border around each bitmap, distances over 8 px. */
const SIZE = 24;
const BORDER = 3;
const RADIUS = 8;
/** The edge's value (192 of 255): MapLibre's shaders take 0.75 as the outline. */
const CUTOFF = 0.25;
const CURVE_STEPS = 8;

type Segment = [x1: number, y1: number, x2: number, y2: number];

/** The outline as line segments, curves flattened (in pixels, y down, as opentype.js gives them). */
function segments(commands: PathCommand[]): Segment[] {
  const out: Segment[] = [];
  let [x, y, startX, startY] = [0, 0, 0, 0];
  const lineTo = (nx: number, ny: number) => {
    if (nx !== x || ny !== y) out.push([x, y, nx, ny]);
    [x, y] = [nx, ny];
  };
  for (const command of commands) {
    if (command.type === 'M') {
      if (x !== startX || y !== startY) lineTo(startX, startY);
      [x, y, startX, startY] = [command.x, command.y, command.x, command.y];
    } else if (command.type === 'L') lineTo(command.x, command.y);
    else if (command.type === 'Z') lineTo(startX, startY);
    else {
      const [x0, y0] = [x, y];
      for (let step = 1; step <= CURVE_STEPS; step += 1) {
        const t = step / CURVE_STEPS;
        const u = 1 - t;
        if (command.type === 'Q') {
          lineTo(
            u * u * x0 + 2 * u * t * command.x1 + t * t * command.x,
            u * u * y0 + 2 * u * t * command.y1 + t * t * command.y,
          );
        } else if (command.type === 'C') {
          lineTo(
            u ** 3 * x0 + 3 * u * u * t * command.x1 + 3 * u * t * t * command.x2 + t ** 3 * command.x,
            u ** 3 * y0 + 3 * u * u * t * command.y1 + 3 * u * t * t * command.y2 + t ** 3 * command.y,
          );
        }
      }
    }
  }
  if (x !== startX || y !== startY) lineTo(startX, startY);
  return out;
}

/** Written out without arrays: it runs for every pixel near every segment, tens of millions of times a range. */
function distanceToSegment(px: number, py: number, x1: number, y1: number, x2: number, y2: number): number {
  const dx = x2 - x1;
  const dy = y2 - y1;
  const lengthSquared = dx * dx + dy * dy;
  let t = lengthSquared === 0 ? 0 : ((px - x1) * dx + (py - y1) * dy) / lengthSquared;
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  const ex = px - x1 - t * dx;
  const ey = py - y1 - t * dy;
  return Math.sqrt(ex * ex + ey * ey);
}

/** Beyond this distance outside the outline every value is 0 (and 2 px inside, 255): no need to measure. */
const REACH = RADIUS * (1 - CUTOFF);

/**
 * Unsigned distances to the outline, measured only near each segment (its box widened by REACH);
 * farther pixels keep REACH, which encodes the same as anything farther.
 */
function distances(
  outline: Segment[],
  originX: number,
  originY: number,
  columns: number,
  rows: number,
): Float64Array {
  const field = new Float64Array(columns * rows).fill(REACH);
  for (const [x1, y1, x2, y2] of outline) {
    const firstColumn = Math.max(0, Math.floor(Math.min(x1, x2) - REACH - originX));
    const lastColumn = Math.min(columns - 1, Math.ceil(Math.max(x1, x2) + REACH - originX));
    const firstRow = Math.max(0, Math.floor(Math.min(y1, y2) - REACH - originY));
    const lastRow = Math.min(rows - 1, Math.ceil(Math.max(y1, y2) + REACH - originY));
    for (let row = firstRow; row <= lastRow; row += 1) {
      for (let column = firstColumn; column <= lastColumn; column += 1) {
        const index = row * columns + column;
        const distance = distanceToSegment(originX + column + 0.5, originY + row + 0.5, x1, y1, x2, y2);
        if (distance < field[index]!) field[index] = distance;
      }
    }
  }
  return field;
}

/** Non-zero winding along one row of pixel centres: TrueType's rule for which side is ink. */
function insideRow(outline: Segment[], py: number, originX: number, columns: number): Uint8Array {
  const crossings: Array<[x: number, direction: number]> = [];
  for (const [x1, y1, x2, y2] of outline) {
    if (y1 <= py ? y2 > py : y2 <= py)
      crossings.push([x1 + ((py - y1) / (y2 - y1)) * (x2 - x1), y2 > y1 ? 1 : -1]);
  }
  crossings.sort((a, b) => a[0] - b[0]);
  const inside = new Uint8Array(columns);
  let winding = 0;
  let next = 0;
  for (let column = 0; column < columns; column += 1) {
    const px = originX + column + 0.5;
    while (next < crossings.length && crossings[next]![0] <= px) winding += crossings[next++]![1];
    inside[column] = winding !== 0 ? 1 : 0;
  }
  return inside;
}

type SdfGlyph = {
  id: number;
  bitmap: Uint8Array;
  width: number;
  height: number;
  left: number;
  top: number;
  advance: number;
};

function renderGlyph(font: Font, codePoint: number): SdfGlyph | undefined {
  const glyph = font.charToGlyph(String.fromCodePoint(codePoint));
  if (glyph.index === 0) return undefined; // .notdef: the font has no such glyph
  const scale = SIZE / font.unitsPerEm;
  const advance = Math.round((glyph.advanceWidth ?? 0) * scale);
  const outline = segments(glyph.getPath(0, 0, SIZE).commands);
  if (outline.length === 0)
    return { id: codePoint, bitmap: new Uint8Array(0), width: 0, height: 0, left: 0, top: 0, advance };
  const xs = outline.flatMap(([x1, , x2]) => [x1, x2]);
  const ys = outline.flatMap(([, y1, , y2]) => [y1, y2]);
  const [left, right] = [Math.floor(Math.min(...xs)), Math.ceil(Math.max(...xs))];
  const [top, bottom] = [Math.floor(Math.min(...ys)), Math.ceil(Math.max(...ys))];
  const [width, height] = [right - left, bottom - top];
  const [columns, rows] = [width + 2 * BORDER, height + 2 * BORDER];
  const bitmap = new Uint8Array(columns * rows);
  const [originX, originY] = [left - BORDER, top - BORDER];
  const field = distances(outline, originX, originY, columns, rows);
  for (let row = 0; row < rows; row += 1) {
    const inside = insideRow(outline, originY + row + 0.5, originX, columns);
    for (let column = 0; column < columns; column += 1) {
      const index = row * columns + column;
      const distance = inside[column] ? -field[index]! : field[index]!;
      bitmap[index] = Math.max(0, Math.min(255, Math.round(255 - 255 * (distance / RADIUS + CUTOFF))));
    }
  }
  // `top` is the glyph's top above the baseline less the font's ascent: MapLibre places lines by
  // their top, as fontnik's glyphs do.
  const ascent = Math.round(font.ascender * scale);
  return { id: codePoint, bitmap, width, height, left, top: -top - ascent, advance };
}

/** The glyph PBF of one range of 256 code points (`start` a multiple of 256) for a font stack's name. */
export function glyphRange(font: Font, fontstack: string, start: number): Uint8Array {
  const pbf = new PbfWriter();
  pbf.writeMessage(
    1,
    (_: null, stack: PbfWriter) => {
      stack.writeStringField(1, fontstack);
      stack.writeStringField(2, `${start}-${start + 255}`);
      for (let codePoint = start; codePoint <= start + 255; codePoint += 1) {
        const glyph = renderGlyph(font, codePoint);
        if (!glyph) continue;
        stack.writeMessage(
          3,
          (g: SdfGlyph, out: PbfWriter) => {
            out.writeVarintField(1, g.id);
            if (g.bitmap.length > 0) out.writeBytesField(2, g.bitmap);
            out.writeVarintField(3, g.width);
            out.writeVarintField(4, g.height);
            out.writeSVarintField(5, g.left);
            out.writeSVarintField(6, g.top);
            out.writeVarintField(7, g.advance);
          },
          glyph,
        );
      }
    },
    null,
  );
  return pbf.finish();
}

/** A TrueType font file, parsed; undefined when the file is not there (the glyph route answers 404). */
export function readFont(file: string): Font | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return undefined;
  }
  return opentype.parse(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer);
}
