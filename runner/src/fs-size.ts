// Disk space taken by a directory tree, used to stop a clone or a scraper's output as soon as
// it passes its cap. Counts allocated blocks as well as apparent size, so neither sparse files
// nor many small files slip under the cap.
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

export async function directorySize(dir: string): Promise<number> {
  let total = 0;
  let entries: string[];
  try {
    entries = await readdir(dir, { recursive: true });
  } catch {
    return 0; // not created yet, or already removed
  }
  for (const entry of entries) {
    try {
      const info = await lstat(join(dir, entry));
      total += Math.max(info.size, info.blocks * 512);
    } catch {
      // removed while we walked: it takes no space any more
    }
  }
  return total;
}
