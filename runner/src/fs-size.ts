// Walks a directory tree that a scraper or a cloned repository controls, as root, without ever
// following a link: entries are judged by their own type (Dirent, lstat), so a symlink to `/`
// is one entry, never a way into the host's file system. Node's `readdir({recursive: true})`
// follows symlinked directories, which is why it is not used on these trees.
//
// The walk counts entries and bytes, charging at least MIN_ENTRY_BYTES per entry (an empty
// file still costs an inode and a directory entry, so a flood of empty files does not count as
// nothing), stops as soon as the entry cap is passed (its cost is bounded by the cap, not by
// what the scraper created), and stops when its signal aborts (the run ended).
import { opendir, lstat } from 'node:fs/promises';
import { join } from 'node:path';

/** What every entry costs at least: one block of a typical file system. */
export const MIN_ENTRY_BYTES = 4096;

export interface TreeUsage {
  /** Entries seen (files, directories, links, anything), the root not counted. */
  entries: number;
  /** Bytes, each entry counted as at least MIN_ENTRY_BYTES. */
  bytes: number;
  /** Relative path of the first symbolic link met, if any (never followed). */
  link: string | undefined;
  /** Relative path of the first entry that is neither a file, a directory nor a link. */
  special: string | undefined;
  /** The walk stopped early: past `maxEntries`, or aborted. */
  incomplete: boolean;
}

export interface WalkOptions {
  /** Stop once more entries than this were seen (the caller's cap is already passed). */
  maxEntries?: number;
  /** Stop once more bytes than this were counted. */
  maxBytes?: number;
  signal?: AbortSignal;
  /** Called for each regular file and directory (never for a link), e.g. to fix modes. */
  visit?: (path: string, isDirectory: boolean) => Promise<void>;
}

export async function treeUsage(root: string, options: WalkOptions = {}): Promise<TreeUsage> {
  const usage: TreeUsage = { entries: 0, bytes: 0, link: undefined, special: undefined, incomplete: false };
  const maxEntries = options.maxEntries ?? Infinity;
  const maxBytes = options.maxBytes ?? Infinity;
  const pending = [''];
  while (pending.length > 0) {
    const relative = pending.pop() as string;
    let dir;
    try {
      dir = await opendir(join(root, relative));
    } catch {
      continue; // not created yet, removed meanwhile, or not a directory any more
    }
    try {
      for await (const entry of dir) {
        if (options.signal?.aborted || usage.entries > maxEntries || usage.bytes > maxBytes) {
          usage.incomplete = true;
          return usage;
        }
        const path = relative === '' ? entry.name : join(relative, entry.name);
        usage.entries += 1;
        let size = 0;
        if (entry.isSymbolicLink()) {
          usage.link ??= path;
        } else if (entry.isDirectory()) {
          pending.push(path);
          await options.visit?.(join(root, path), true);
        } else if (entry.isFile()) {
          try {
            const info = await lstat(join(root, path));
            size = Math.max(info.size, info.blocks * 512);
          } catch {
            // removed while we walked: it takes no space any more
          }
          await options.visit?.(join(root, path), false);
        } else {
          usage.special ??= path;
        }
        usage.bytes += Math.max(size, MIN_ENTRY_BYTES);
      }
    } finally {
      await dir.close().catch(() => undefined);
    }
  }
  usage.incomplete = usage.entries > maxEntries || usage.bytes > maxBytes;
  return usage;
}
