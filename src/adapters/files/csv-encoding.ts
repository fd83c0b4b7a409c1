import { permanent } from '../../domain/ingest/failures.ts';

// A CSV file's encoding, decided per file while it streams (issue 30 §7): a file whose bytes are
// all valid UTF-8 is UTF-8; a file with no valid multi-byte UTF-8 sequence in it is Windows-1252
// (Latin-1 as spreadsheets write it: the WHATWG "latin1"); a file with both (valid multi-byte
// UTF-8 sequences and bytes that cannot be UTF-8) mixes encodings, and no one decoding reads it
// right (read as Latin-1, "Zürich" in UTF-8 became "ZÃ¼rich"), so it is refused with the first row
// that breaks the encoding the rows before it had. Before, the first 64 kB decided for the whole
// file: UTF-8 bytes after it in a Latin-1 file became mojibake, Latin-1 bytes after it in a UTF-8
// file became U+FFFD, both silently.
//
// The undecided start (ASCII only so far) reads the same in both, so the decision is taken at the
// first non-ASCII byte and never needs a second pass over the file.

type Mode = 'undecided' | 'utf-8' | 'windows-1252';

/** The bytes `[at, at+n)` are one valid multi-byte UTF-8 sequence: n; not one: 0; cut off by the end: -1. */
function utf8Sequence(bytes: Uint8Array, at: number): number {
  const first = bytes[at] ?? 0;
  let length: number;
  let low = 0x80;
  let high = 0xbf;
  if (first >= 0xc2 && first <= 0xdf) length = 2;
  else if (first >= 0xe0 && first <= 0xef) {
    length = 3;
    if (first === 0xe0) low = 0xa0;
    if (first === 0xed) high = 0x9f;
  } else if (first >= 0xf0 && first <= 0xf4) {
    length = 4;
    if (first === 0xf0) low = 0x90;
    if (first === 0xf4) high = 0x8f;
  } else return 0;
  for (let k = 1; k < length; k += 1) {
    if (at + k >= bytes.length) return -1;
    const next = bytes[at + k] ?? 0;
    const [min, max] = k === 1 ? [low, high] : [0x80, 0xbf];
    if (next < min || next > max) return 0;
  }
  return length;
}

/** The first byte at or after `from` that is not ASCII, or -1. */
function firstNonAscii(bytes: Uint8Array, from: number): number {
  for (let i = from; i < bytes.length; i += 1) if ((bytes[i] ?? 0) >= 0x80) return i;
  return -1;
}

/** Windows-1252's characters for 0x80-0x9F (WHATWG; the five it leaves undefined stay C1 controls). */
const CP1252_HIGH =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/**
 * Windows-1252 text of some bytes. Node's TextDecoder('windows-1252') decodes ISO-8859-1 (0x80 is
 * U+0080, not "€"), so Latin-1 is decoded and the 0x80-0x9F range mapped here.
 */
function windows1252(bytes: Uint8Array): string {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1');
  return /[\x80-\x9f]/u.test(text)
    ? text.replace(/[\x80-\x9f]/gu, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80] ?? c)
    : text;
}

export type DecodedChunk = {
  text: string;
  /** Set when the bytes after `text` break the file's encoding: what to say about them. */
  mixed: { found: string; expected: 'UTF-8' | 'Latin-1' } | null;
};

export class CsvDecoder {
  private mode: Mode;
  private utf8 = new TextDecoder('utf-8', { fatal: true });
  /**
   * The last bytes of a chunk that may begin a UTF-8 sequence the next one ends: in Windows-1252
   * mode, to look for UTF-8 across the cut; undecided, the start of a character the UTF-8 decoder holds.
   */
  private carry: Uint8Array = new Uint8Array(0);

  /** `utf8`: the file declared UTF-8 (a byte order mark). */
  constructor(declared: 'utf-8' | null = null) {
    this.mode = declared ?? 'undecided';
  }

  /** The file's encoding as decided so far (`undecided`: ASCII only). */
  get encoding(): Mode {
    return this.mode;
  }

  decode(chunk: Uint8Array): DecodedChunk {
    if (this.mode === 'windows-1252') return this.latinChunk(chunk);
    try {
      const text = this.utf8.decode(chunk, { stream: true });
      if (this.mode === 'undecided') {
        // A whole character decoded: UTF-8. Only the start of one (held by the decoder for the next
        // chunk) decides nothing yet; those bytes are kept in case the file turns out to be Latin-1.
        if (/[\u0080-\u{10ffff}]/u.test(text)) this.mode = 'utf-8';
        else {
          let start = chunk.length;
          while (start > 0 && chunk.length - start < 3 && (chunk[start - 1] ?? 0) >= 0x80) start -= 1;
          this.carry = chunk.slice(start);
        }
      }
      return { text, mixed: null };
    } catch {
      return this.notUtf8(chunk);
    }
  }

  /** The end of the file: what a decoder still holds. */
  end(): DecodedChunk {
    if (this.mode === 'windows-1252') {
      const text = windows1252(this.carry);
      this.carry = new Uint8Array(0);
      return { text, mixed: null };
    }
    try {
      return { text: this.utf8.decode(), mixed: null };
    } catch {
      return {
        text: '',
        mixed: { found: 'a UTF-8 character cut off by the end of the file', expected: 'UTF-8' },
      };
    }
  }

  /** A chunk the UTF-8 decoder refused: where, and whether the file was UTF-8 before it. */
  private notUtf8(chunk: Uint8Array): DecodedChunk {
    let at = 0;
    // Bytes that end a character the previous chunk began (the decoder held its start).
    if (this.mode === 'utf-8') while (at < 3 && (chunk[at] ?? 0) >= 0x80 && (chunk[at] ?? 0) <= 0xbf) at += 1;
    let valid = false;
    for (;;) {
      const next = firstNonAscii(chunk, at);
      // Refused only for bytes held from an earlier chunk (a sequence the chunk's start breaks).
      if (next < 0) break;
      const length = utf8Sequence(chunk, next);
      if (length <= 0) {
        at = next;
        break;
      }
      valid = true;
      at = next + length;
    }
    if (this.mode === 'utf-8' || valid) {
      // The file was UTF-8 up to here: the text before the offending byte, to count the rows it ends.
      const text = new TextDecoder('utf-8', { fatal: false }).decode(chunk.subarray(0, at));
      const byte = chunk[at] ?? 0;
      return {
        text,
        mixed: {
          found: `the byte 0x${byte.toString(16).toUpperCase()} ("${windows1252(chunk.subarray(at, at + 1))}" in Latin-1), which is not UTF-8`,
          expected: 'UTF-8',
        },
      };
    }
    // ASCII until here (but for `carry`, the bytes the UTF-8 decoder held): the file is Latin-1
    // (Windows-1252) from its first byte.
    this.mode = 'windows-1252';
    this.utf8 = new TextDecoder('utf-8', { fatal: true });
    return this.latinChunk(chunk);
  }

  private latinChunk(chunk: Uint8Array): DecodedChunk {
    const bytes = this.carry.length === 0 ? chunk : Buffer.concat([this.carry, chunk]);
    let at = 0;
    let end = bytes.length;
    for (;;) {
      const next = firstNonAscii(bytes, at);
      if (next < 0) break;
      const length = utf8Sequence(bytes, next);
      if (length > 0) {
        const sequence = bytes.subarray(next, next + length);
        return {
          text: windows1252(bytes.subarray(0, next)),
          mixed: {
            found: `"${new TextDecoder().decode(sequence)}" written in UTF-8 (it reads as "${windows1252(sequence)}" in Latin-1)`,
            expected: 'Latin-1',
          },
        };
      }
      if (length < 0) {
        end = next;
        break;
      }
      at = next + 1;
    }
    this.carry = bytes.slice(end);
    return { text: windows1252(bytes.subarray(0, end)), mixed: null };
  }
}

/** The import's failure for a file that mixes encodings, naming the row (1 = the first data row). */
export function mixedEncoding(mixed: NonNullable<DecodedChunk['mixed']>, row: number): Error {
  const where = row === 0 ? 'the header row' : `row ${row}`;
  const before = mixed.expected === 'UTF-8' ? 'UTF-8' : 'Latin-1 (Windows-1252)';
  return permanent(
    'MIXED_ENCODING',
    `the file mixes text encodings: it is ${before} up to ${where}, which holds ${mixed.found}; ` +
      'save the file as UTF-8 (in a spreadsheet: "CSV UTF-8") and upload it again',
  );
}
