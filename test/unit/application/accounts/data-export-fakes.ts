import { Readable } from 'node:stream';
import type {
  DataExportQueue,
  ExportArchive,
  UserDataReader,
} from '../../../../src/ports/accounts/data-export-store.ts';
import { memoryDataExportStore } from '../../../fakes/accounts/data-export-store.ts';
import { testClock } from './account-use-case-fakes.ts';

// The own-data export's collaborators for the fast tier: the shared in-memory DataExportStore (it
// passes the Postgres store's behaviour suite), and minimal fakes of the ports that have no shared
// fake: the queue records, the reader serves a user's records from a map, the archive keeps each
// ZIP's entries as text.

type UserData = {
  account: Record<string, unknown>;
  catalogs?: Record<string, unknown>[];
  events?: Record<string, unknown>[];
};

function memoryUserDataReader(data: Map<number, UserData>): UserDataReader & { eventPages: number } {
  const reader = {
    eventPages: 0,
    account: async (userId: number) => data.get(userId)?.account ?? null,
    catalogs: async (userId: number) => data.get(userId)?.catalogs ?? [],
    datasets: async () => [],
    async events(userId: number, after: number, limit: number) {
      reader.eventPages += 1;
      return (data.get(userId)?.events ?? []).filter((e) => (e.id as number) > after).slice(0, limit);
    },
    imports: async () => [],
    scrapers: async () => [],
    scraperRuns: async () => [],
  };
  return reader;
}

/** An archive in memory: the entries of each written export by stored path; `failWith` breaks writes. */
function memoryArchive() {
  const files = new Map<string, Map<string, string>>();
  const archive = {
    files,
    failWith: null as Error | null,
    async write(exportId: number, entries: AsyncIterable<{ name: string; content: AsyncIterable<string> }>) {
      if (archive.failWith) throw archive.failWith;
      const written = new Map<string, string>();
      let sizeBytes = 0;
      for await (const entry of entries) {
        let text = '';
        for await (const chunk of entry.content) text += chunk;
        written.set(entry.name, text);
        sizeBytes += Buffer.byteLength(text);
      }
      const storedPath = `exports/${exportId}.zip`;
      files.set(storedPath, written);
      return { storedPath, sizeBytes };
    },
    open(storedPath: string): NodeJS.ReadableStream {
      return Readable.from([JSON.stringify([...(files.get(storedPath) ?? new Map()).keys()])]);
    },
    async remove(storedPath: string) {
      files.delete(storedPath);
    },
  } satisfies ExportArchive & Record<string, unknown>;
  return archive;
}

export function dataExportDeps() {
  const clock = testClock();
  const data = new Map<number, UserData>();
  const queued: number[] = [];
  const queue: DataExportQueue = { enqueueDataExport: async (id) => void queued.push(id) };
  return {
    exports: memoryDataExportStore(clock),
    queue,
    queued,
    data,
    reader: memoryUserDataReader(data),
    archive: memoryArchive(),
    clock,
  };
}
