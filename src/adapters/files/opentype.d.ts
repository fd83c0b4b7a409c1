// opentype.js ships no type declarations: the part of its API the glyph builder uses.
declare module 'opentype.js' {
  export type PathCommand =
    | { type: 'M' | 'L'; x: number; y: number }
    | { type: 'Q'; x1: number; y1: number; x: number; y: number }
    | { type: 'C'; x1: number; y1: number; x2: number; y2: number; x: number; y: number }
    | { type: 'Z' };
  export type Glyph = {
    index: number;
    advanceWidth: number | undefined;
    getPath(x: number, y: number, fontSize: number): { commands: PathCommand[] };
  };
  export type Font = {
    unitsPerEm: number;
    ascender: number;
    charToGlyph(char: string): Glyph;
  };
  const opentype: { parse(buffer: ArrayBuffer): Font };
  export default opentype;
}
