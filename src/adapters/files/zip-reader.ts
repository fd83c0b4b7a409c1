import { inflateRawSync } from 'node:zlib';
import { permanent } from '../../domain/ingest/failures.ts';

// Reads the entries of a ZIP archive (XLSX and ODS are ZIP files) without trusting it: sizes come
// from the central directory, each entry is inflated with zlib's maxOutputLength so that a lying
// header cannot make it grow past its cap, and the expansion ratio and the total are bounded. A
// zip bomb fails with a permanent INVALID_FORMAT error instead of filling memory.

export type ZipLimits = { maxEntryBytes: number; maxTotalBytes: number; maxRatio: number };

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxEntryBytes: 256 * 1024 * 1024,
  maxTotalBytes: 512 * 1024 * 1024,
  maxRatio: 200,
};

type Entry = { name: string; method: number; compressedSize: number; size: number; offset: number };

const bomb = (detail: string) => permanent('INVALID_FORMAT', `the workbook looks like a zip bomb: ${detail}`);

function centralDirectory(zip: Buffer): Entry[] {
  // End of central directory: the last 22..65557 bytes, signature 0x06054b50.
  const from = Math.max(0, zip.length - 65_557);
  let eocd = -1;
  for (let i = zip.length - 22; i >= from; i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw permanent('INVALID_FORMAT', 'the file is not a ZIP archive (no XLSX/ODS workbook)');
  const count = zip.readUInt16LE(eocd + 10);
  let offset = zip.readUInt32LE(eocd + 16);
  const entries: Entry[] = [];
  for (let i = 0; i < count; i++) {
    if (offset + 46 > zip.length || zip.readUInt32LE(offset) !== 0x02014b50) {
      throw permanent('INVALID_FORMAT', 'the workbook is damaged (central directory)');
    }
    const nameLength = zip.readUInt16LE(offset + 28);
    const extraLength = zip.readUInt16LE(offset + 30);
    const commentLength = zip.readUInt16LE(offset + 32);
    entries.push({
      method: zip.readUInt16LE(offset + 10),
      compressedSize: zip.readUInt32LE(offset + 20),
      size: zip.readUInt32LE(offset + 24),
      offset: zip.readUInt32LE(offset + 42),
      name: zip.toString('utf8', offset + 46, offset + 46 + nameLength),
    });
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

export class ZipArchive {
  readonly #zip: Buffer;
  readonly #entries: Map<string, Entry>;
  readonly #limits: ZipLimits;
  #inflated = 0;

  constructor(zip: Buffer, limits: ZipLimits = DEFAULT_ZIP_LIMITS) {
    this.#zip = zip;
    this.#limits = limits;
    this.#entries = new Map(centralDirectory(zip).map((entry) => [entry.name, entry]));
  }

  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /** The entry's bytes, or null when the archive has no such entry. */
  read(name: string): Buffer | null {
    const entry = this.#entries.get(name);
    if (!entry) return null;
    const limits = this.#limits;
    if (entry.size > limits.maxEntryBytes) throw bomb(`${name} would be ${entry.size} bytes`);
    if (entry.compressedSize > 0 && entry.size / entry.compressedSize > limits.maxRatio) {
      throw bomb(`${name} expands ${Math.round(entry.size / entry.compressedSize)} times`);
    }
    const header = entry.offset;
    if (header + 30 > this.#zip.length || this.#zip.readUInt32LE(header) !== 0x04034b50) {
      throw permanent('INVALID_FORMAT', `the workbook is damaged (${name})`);
    }
    const start = header + 30 + this.#zip.readUInt16LE(header + 26) + this.#zip.readUInt16LE(header + 28);
    const data = this.#zip.subarray(start, start + entry.compressedSize);
    // The declared size may lie: never inflate more than the ratio allows, nor past the caps.
    const cap = Math.min(
      limits.maxEntryBytes,
      limits.maxTotalBytes - this.#inflated,
      Math.max(entry.size, 1024 * 1024, data.length * limits.maxRatio),
    );
    let out: Buffer;
    if (entry.method === 0) out = Buffer.from(data);
    else if (entry.method === 8) {
      try {
        out = inflateRawSync(data, { maxOutputLength: Math.max(1, cap) });
      } catch (error) {
        if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
          throw bomb(`${name} inflates past ${cap} bytes`);
        throw permanent('INVALID_FORMAT', `the workbook is damaged (${name}: ${(error as Error).message})`);
      }
    } else
      throw permanent('INVALID_FORMAT', `the workbook uses an unsupported compression (${entry.method})`);
    this.#inflated += out.length;
    if (this.#inflated > limits.maxTotalBytes) throw bomb(`more than ${limits.maxTotalBytes} bytes in all`);
    return out;
  }
}
