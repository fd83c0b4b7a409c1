import { Type } from 'typebox';
import { type DatabasePool, row, sql } from '../database.ts';
import { dataSignature } from './data-version.ts';

// A verified answer cache for /api/v1/events pages, per API process. An answer is stored with its
// data signature (data-version.ts) of the datasets the answer read, taken in the answer's own
// statement, so in its snapshot. A later request for the same page by the same viewer reads the
// current signature of those datasets (one small round trip) and gets the stored answer only when
// it is unchanged: no write committed since touched what the answer depends on, so the statement
// would give the same answer now. A write committed before a request is always seen (versions are
// raised in the writing transaction); nothing is ever served from a snapshot older than the request.

/** The answer of a page: the events as their JSON text's UTF-8 bytes and the filter's total. */
export type CachedPage = { eventsJson: Buffer; totalDocs: number };

type Entry = {
  page: CachedPage;
  /** The datasets the answer read; null: every dataset (no scope at all). */
  datasetIds: number[] | null;
  signature: string;
  bytes: number;
};

export type PageCache = {
  /** The stored answer for `key` with its signature when that still holds (one round trip), else undefined. */
  lookup(key: string): Promise<(CachedPage & { signature: string }) | undefined>;
  /** Stores an answer read with `signature` (from dataSignature, in the answer's own statement). */
  store(key: string, page: CachedPage, datasetIds: number[] | null, signature: string): void;
  /** Entries, their approximate bytes, and lookups answered (hits) or not (misses). */
  usage(): { entries: number; bytes: number; hits: number; misses: number };
};

const SignatureRow = row(Type.Object({ signature: Type.String() }));

/** Per entry besides its strings: the Map slot, the objects, the ids (a rough, safe allowance). */
const ENTRY_OVERHEAD = 200;

/**
 * A cache of at most `maxBytes` (JavaScript strings counted at two bytes a character), least
 * recently used out first.
 */
export function pageCache(pool: DatabasePool, maxBytes: number): PageCache {
  const entries = new Map<string, Entry>();
  let bytes = 0;
  let hits = 0;
  let misses = 0;

  function remove(key: string): void {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    bytes -= entry.bytes;
  }

  // Two fixed statement texts (all datasets, or a list as one array parameter), so they are
  // prepared once per connection and never planned again.
  function currentSignature(datasetIds: number[] | null): Promise<string> {
    const query =
      datasetIds === null
        ? sql.prepared('chronomap_page_cache_all', SignatureRow)`select ${dataSignature(null)} as signature`
        : sql.prepared(
            'chronomap_page_cache_some',
            SignatureRow,
          )`select ${dataSignature(datasetIds)} as signature`;
    return pool.oneFirst(query);
  }

  return {
    async lookup(key) {
      const entry = entries.get(key);
      if (!entry) {
        misses += 1;
        return undefined;
      }
      const signature = await currentSignature(entry.datasetIds);
      // Another request may have replaced or dropped the entry meanwhile: judge the one checked.
      if (signature !== entry.signature) {
        if (entries.get(key) === entry) remove(key);
        misses += 1;
        return undefined;
      }
      if (entries.get(key) === entry) {
        // Most recently used last.
        entries.delete(key);
        entries.set(key, entry);
      }
      hits += 1;
      return { ...entry.page, signature: entry.signature };
    },

    store(key, page, datasetIds, signature) {
      const size =
        2 * (key.length + signature.length) +
        page.eventsJson.length +
        8 * (datasetIds?.length ?? 0) +
        ENTRY_OVERHEAD;
      remove(key);
      if (size > maxBytes) return;
      while (bytes + size > maxBytes) {
        const oldest = entries.keys().next();
        if (oldest.done) break;
        remove(oldest.value);
      }
      entries.set(key, { page, datasetIds, signature, bytes: size });
      bytes += size;
    },

    usage() {
      return { entries: entries.size, bytes, hits, misses };
    },
  };
}
