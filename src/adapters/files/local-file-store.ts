import { randomUUID } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FileStore } from '../../ports/file-store.ts';

// Ingest files under <dataDir>/ingest (the root localSourceFiles reads); stored paths are relative
// to it so that the data directory can move. Each origin has its folder; a new file gets a random
// name, so two writers never meet on one.

export function localFileStore(root: string): FileStore {
  return {
    async writeNew(origin, extension, bytes) {
      const storedPath = `${origin}s/${randomUUID()}${extension.toLowerCase()}`;
      const destination = path.join(root, storedPath);
      await mkdir(path.dirname(destination), { recursive: true });
      await writeFile(destination, bytes, { flag: 'wx' });
      return { storedPath };
    },
    async remove(storedPath) {
      await rm(path.join(root, storedPath), { force: true });
    },
  };
}
