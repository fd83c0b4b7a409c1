/** Who wrote an ingest file: an upload, a scheduled or webhook fetch, a scraper's output. */
export type StoredFileOrigin = 'upload' | 'scheduled' | 'scraper';

/**
 * Where ingest files are written: the store names each new file's place (its stored path, relative
 * to the file root that SourceFiles reads) and removes files nothing refers to any more.
 */
export interface FileStore {
  /**
   * Writes the content (bytes, or chunks as they arrive) as a new file (`extension` with its dot,
   * e.g. ".csv"); answers its stored path and size. A stream that fails leaves no file behind and
   * its error is thrown. `sha256` is the hex SHA-256 of the bytes written, computed as they were.
   */
  writeNew(
    origin: StoredFileOrigin,
    extension: string,
    content: Buffer | AsyncIterable<Uint8Array>,
  ): Promise<{ storedPath: string; bytes: number; sha256: string }>;
  remove(storedPath: string): Promise<void>;
}
