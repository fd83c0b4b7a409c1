import { createHash, randomUUID } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import type { ExportFileSlot, ExportFileStore, ExportFileWriter } from '../../ports/read/export-files.ts';

// The materialised exports on the local disk (ports/read/export-files.ts): one file per key under
// `directory` (EXPORT_CACHE_DIR, default <data dir>/exports), named by the key's SHA-256, written
// under a temporary name and renamed when whole, so a reader never sees a part of one. Several API
// processes may share the directory: every step is a single rename or unlink.
//
// Least recently used out first: a file found is touched (its mtime set to now), and after each
// commit the files are listed and the oldest removed until the rest fit in `maxBytes`. The file just
// committed is never the one removed (its request is about to read it), so the directory may exceed
// the cap by that one file until the next commit. A file removed while a download reads it is still
// read to its end (an open file outlives its name). Files are 0600: they hold what the viewer may read.

const SUFFIX = '.export';
const TEMPORARY = '.part-';

/** Temporary files older than this are a writer that died (a crash, a kill -9): removed at the next commit. */
const ABANDONED_AFTER_MS = 60 * 60 * 1000;

function fileName(key: string): string {
  return `${createHash('sha256').update(key).digest('base64url')}${SUFFIX}`;
}

export function localExportFileStore(options: { directory: string; maxBytes: number }): ExportFileStore {
  const { directory, maxBytes } = options;
  let ready: Promise<unknown> | null = null;
  const ensureDirectory = () => (ready ??= mkdir(directory, { recursive: true, mode: 0o700 }));

  async function evict(keep: string): Promise<void> {
    const names = await readdir(directory).catch(() => [] as string[]);
    const files: Array<{ name: string; bytes: number; usedAt: number }> = [];
    const now = Date.now();
    for (const name of names) {
      const info = await stat(path.join(directory, name)).catch(() => null);
      if (!info?.isFile()) continue;
      if (name.startsWith(TEMPORARY)) {
        if (now - info.mtimeMs > ABANDONED_AFTER_MS) await rm(path.join(directory, name), { force: true });
        continue;
      }
      if (name.endsWith(SUFFIX)) files.push({ name, bytes: info.size, usedAt: info.mtimeMs });
    }
    let total = files.reduce((sum, file) => sum + file.bytes, 0);
    files.sort((a, b) => a.usedAt - b.usedAt);
    for (const file of files) {
      if (total <= maxBytes) break;
      if (file.name === keep) continue;
      await rm(path.join(directory, file.name), { force: true });
      total -= file.bytes;
    }
  }

  async function reserve(key: string): Promise<ExportFileSlot> {
    await ensureDirectory();
    const name = fileName(key);
    const temporary = path.join(directory, `${TEMPORARY}${randomUUID()}`);
    return {
      path: temporary,
      async commit() {
        // On disk before it gets its name: after a crash a name never holds a shorter file.
        const handle = await open(temporary, 'r+');
        try {
          await handle.chmod(0o600);
          await handle.sync();
        } finally {
          await handle.close();
        }
        const file = path.join(directory, name);
        await rename(temporary, file);
        await evict(name);
        return { path: file, bytes: (await stat(file)).size };
      },
      abort: () => rm(temporary, { force: true }),
    };
  }

  return {
    async find(key) {
      const file = path.join(directory, fileName(key));
      const info = await stat(file).catch(() => null);
      if (!info?.isFile()) return null;
      const now = new Date();
      // Touched as used; it may be evicted between the stat and here, which only means a miss next time.
      await utimes(file, now, now).catch(() => {});
      return { path: file, bytes: info.size };
    },

    async clear() {
      const names = await readdir(directory).catch(() => [] as string[]);
      await Promise.all(
        names
          .filter((name) => name.endsWith(SUFFIX) || name.startsWith(TEMPORARY))
          .map((name) => rm(path.join(directory, name), { force: true })),
      );
    },

    reserve,

    async create(key): Promise<ExportFileWriter> {
      const slot = await reserve(key);
      const handle = await open(slot.path, 'wx', 0o600);
      let bytes = 0;
      let closed = false;
      const close = async () => {
        if (closed) return;
        closed = true;
        await handle.close();
      };
      return {
        async write(chunk) {
          const { bytesWritten } =
            typeof chunk === 'string' ? await handle.write(chunk, null, 'utf8') : await handle.write(chunk);
          bytes += bytesWritten;
        },
        async commit() {
          await close();
          return { ...(await slot.commit()), bytes };
        },
        async abort() {
          await close().catch(() => {});
          await slot.abort();
        },
      };
    },
  };
}
