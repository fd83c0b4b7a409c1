import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FileStore, StoredFileOrigin } from '../../ports/ingest/file-store.ts';

// Ingest files under <dataDir>/ingest (the root localSourceFiles reads); stored paths are relative
// to it so that the data directory can move. Each origin has its folder; a new file gets a random
// name, so two writers never meet on one. A new file is on disk before writeNew resolves (the
// upload's 201 follows): its data and its directory entry are fsynced, and the folder's own entry
// too when this write created the folder. The SHA-256 of the bytes is computed as they pass on their
// way to the disk (an event's provenance names it), never by reading the file again.

const FOLDERS: Record<StoredFileOrigin, string> = {
  upload: 'uploads',
  scheduled: 'scheduled',
  scraper: 'scrapers',
};

export function localFileStore(root: string): FileStore {
  return {
    async writeNew(origin, extension, content) {
      const storedPath = `${FOLDERS[origin]}/${randomUUID()}${extension.toLowerCase()}`;
      const destination = path.join(root, storedPath);
      const created = await mkdir(path.dirname(destination), { recursive: true });
      let bytes = 0;
      const hash = createHash('sha256');
      const chunks = Buffer.isBuffer(content) ? [content] : content;
      try {
        await pipeline(
          Readable.from(
            (async function* () {
              for await (const chunk of chunks) {
                bytes += chunk.length;
                hash.update(chunk);
                yield chunk;
              }
            })(),
          ),
          createWriteStream(destination, { flags: 'wx' }),
        );
        await fsyncPath(destination);
        await fsyncPath(path.dirname(destination));
        if (created !== undefined) await fsyncPath(root);
      } catch (error) {
        await rm(destination, { force: true });
        throw error;
      }
      return { storedPath, bytes, sha256: hash.digest('hex') };
    },
    async remove(storedPath) {
      await rm(path.join(root, storedPath), { force: true });
    },
  };
}

/** Flushes a file's data, or a directory's entries, to the disk. */
async function fsyncPath(target: string): Promise<void> {
  const handle = await open(target, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
