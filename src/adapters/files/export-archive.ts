import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import archiver from 'archiver';
import type { ExportArchive } from '../../ports/accounts/data-export-store.ts';

// Data export ZIPs under <dataDir>/exports, written by archiver (docs/decisions.md, "Data exports"):
// each entry streams in as the job reads it, so a large account never sits in memory whole.

export function localExportArchive(root: string): ExportArchive {
  return {
    async write(exportId, entries) {
      await mkdir(root, { recursive: true });
      const storedPath = `export-${exportId}-${randomUUID()}.zip`;
      const full = path.join(root, storedPath);
      const output = createWriteStream(full, { flags: 'wx' });
      const zip = archiver('zip', { zlib: { level: 6 } });
      const done = new Promise<void>((resolve, reject) => {
        output.on('close', resolve);
        output.on('error', reject);
        zip.on('error', reject);
      });
      zip.pipe(output);
      try {
        for await (const entry of entries) {
          const finished = new Promise<void>((resolve, reject) => {
            zip.once('entry', () => resolve());
            zip.once('error', reject);
          });
          zip.append(Readable.from(entry.content), { name: entry.name });
          // One entry at a time: the next one is read only after this one is in the archive.
          await finished;
        }
        await zip.finalize();
        await done;
      } catch (error) {
        zip.abort();
        output.destroy();
        await rm(full, { force: true });
        throw error;
      }
      return { storedPath, sizeBytes: (await stat(full)).size };
    },
    open(storedPath) {
      return createReadStream(path.join(root, path.basename(storedPath)));
    },
    async remove(storedPath) {
      await rm(path.join(root, path.basename(storedPath)), { force: true });
    },
  };
}
