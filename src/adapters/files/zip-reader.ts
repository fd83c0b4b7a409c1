import { StringDecoder } from 'node:string_decoder';
import yauzl from 'yauzl';
import { IngestFailure, permanent } from '../../domain/ingest/failures.ts';

// Reads the entries of a ZIP archive (XLSX and ODS are ZIP files) with yauzl, without trusting it.
// yauzl reads the central directory from the file on demand (the workbook is never loaded whole),
// validates entry names, and fails a stream that inflates past the entry's declared size. Around it,
// our limits are checked before any inflating: the number of entries, each declared size and
// expansion ratio, and a running total of inflated bytes that stops the stream at the cap. A zip
// bomb fails with a permanent INVALID_FORMAT error instead of filling memory or the CPU.

export type ZipLimits = {
  maxEntries: number;
  maxEntryBytes: number;
  maxTotalBytes: number;
  maxRatio: number;
};

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  // A workbook of a few hundred sheets has about a thousand parts; more is not a workbook we want.
  maxEntries: 10_000,
  maxEntryBytes: 256 * 1024 * 1024,
  maxTotalBytes: 512 * 1024 * 1024,
  maxRatio: 200,
};

const bomb = (detail: string) => permanent('INVALID_FORMAT', `the workbook looks like a zip bomb: ${detail}`);
const damaged = (detail: string) => permanent('INVALID_FORMAT', `the workbook is damaged (${detail})`);

export class ZipArchive {
  readonly #zip: yauzl.ZipFile;
  readonly #entries: Map<string, yauzl.Entry>;
  readonly #limits: ZipLimits;
  #inflated = 0;

  private constructor(zip: yauzl.ZipFile, entries: Map<string, yauzl.Entry>, limits: ZipLimits) {
    this.#zip = zip;
    this.#entries = entries;
    this.#limits = limits;
  }

  /** Opens the archive and reads its directory (names and declared sizes only). Close it when done. */
  static async open(path: string, limits: ZipLimits = DEFAULT_ZIP_LIMITS): Promise<ZipArchive> {
    let zip: yauzl.ZipFile;
    try {
      zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true });
    } catch (error) {
      const message = (error as Error).message;
      if (/central directory record signature not found/i.test(message))
        throw permanent('INVALID_FORMAT', 'the file is not a ZIP archive (no XLSX/ODS workbook)');
      throw damaged(message);
    }
    if (zip.entryCount > limits.maxEntries) {
      zip.close();
      throw bomb(`${zip.entryCount} entries, more than ${limits.maxEntries}`);
    }
    const entries = new Map<string, yauzl.Entry>();
    try {
      for await (const entry of zip.eachEntry()) entries.set(entry.fileName, entry);
    } catch (error) {
      zip.close();
      throw damaged(`directory: ${(error as Error).message}`);
    }
    return new ZipArchive(zip, entries, limits);
  }

  has(name: string): boolean {
    return this.#entries.has(name);
  }

  close(): void {
    if (this.#zip.isOpen) this.#zip.close();
  }

  /**
   * The entry's text as UTF-8 chunks (never split inside a character), or null when the archive has
   * no such entry. Sizes and ratio are checked before the first byte is inflated.
   */
  async textChunks(name: string): Promise<AsyncGenerator<string> | null> {
    const entry = this.#entries.get(name);
    if (!entry) return null;
    const limits = this.#limits;
    const size = entry.uncompressedSize;
    if (size > limits.maxEntryBytes) throw bomb(`${name} would be ${size} bytes`);
    if (this.#inflated + size > limits.maxTotalBytes)
      throw bomb(`more than ${limits.maxTotalBytes} bytes in all`);
    if (entry.compressedSize > 0 && size / entry.compressedSize > limits.maxRatio) {
      throw bomb(`${name} expands ${Math.round(size / entry.compressedSize)} times`);
    }
    let stream: NodeJS.ReadableStream;
    try {
      stream = await this.#zip.openReadStreamPromise(entry);
    } catch (error) {
      throw damaged(`${name}: ${(error as Error).message}`);
    }
    return this.#decode(name, size, stream);
  }

  /** The entry's whole text (for the small parts: directory, styles, shared strings), or null. */
  async text(name: string): Promise<string | null> {
    const chunks = await this.textChunks(name);
    if (!chunks) return null;
    let text = '';
    for await (const chunk of chunks) text += chunk;
    return text;
  }

  async *#decode(name: string, declaredSize: number, stream: NodeJS.ReadableStream): AsyncGenerator<string> {
    const decoder = new StringDecoder('utf8');
    try {
      for await (const chunk of stream) {
        this.#inflated += (chunk as Buffer).length;
        // The declared sizes were checked; this catches the bytes a lying total would add.
        if (this.#inflated > this.#limits.maxTotalBytes)
          throw bomb(`more than ${this.#limits.maxTotalBytes} bytes in all`);
        yield decoder.write(chunk as Buffer);
      }
      yield decoder.end();
    } catch (error) {
      if (error instanceof IngestFailure) throw error;
      const message = (error as Error).message;
      // yauzl's validateEntrySizes: the entry inflates past the size its header declares.
      if (/too many bytes in the stream/.test(message))
        throw bomb(`${name} inflates past its declared ${declaredSize} bytes`);
      throw damaged(`${name}: ${message}`);
    } finally {
      (stream as unknown as { destroy?: () => void }).destroy?.();
    }
  }
}
