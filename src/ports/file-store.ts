/** Who wrote an ingest file: an upload, a scheduled or webhook fetch, a scraper's output. */
export type StoredFileOrigin = 'upload' | 'scheduled' | 'scraper';

/**
 * Where ingest files are written: the store names each new file's place (its stored path, relative
 * to the file root that SourceFiles reads) and removes files nothing refers to any more.
 */
export interface FileStore {
  /** Writes `bytes` as a new file (`extension` with its dot, e.g. ".csv"); answers its stored path. */
  writeNew(origin: StoredFileOrigin, extension: string, bytes: Buffer): Promise<{ storedPath: string }>;
  remove(storedPath: string): Promise<void>;
}
