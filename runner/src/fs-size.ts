// Walks a directory tree that a scraper or a cloned repository controls, as root, without ever
// following a link: entries are judged by their own type (Dirent, lstat), so a symlink to `/`
// is one entry, never a way into the host's file system. Node's `readdir({recursive: true})`
// follows symlinked directories, which is why it is not used on these trees.
//
// The walk counts entries and bytes, charging at least MIN_ENTRY_BYTES per entry (an empty
// file still costs an inode and a directory entry, so a flood of empty files does not count as
// nothing), stops as soon as the entry cap is passed (its cost is bounded by the cap, not by
// what the scraper created), and stops when its signal aborts (the run ended).
//
// Any depth: a path longer than the kernel's PATH_MAX (4,096 bytes) cannot be opened by name,
// and the walk used to skip such directories (a socket hidden below them let a run succeed).
// A deep directory is reached in steps instead, each step opened relative to the previous one
// through /proc/self/fd/N, so no name handed to the kernel is long.
import { type Dir, constants } from 'node:fs';
import { type FileHandle, lstat, open, opendir } from 'node:fs/promises';
import { join } from 'node:path';

/** Paths up to this long are opened by name; longer ones in steps of at most this length. */
const LONG_PATH = 3072;

/**
 * Opens directory `relative` of `root`; `base` is a short path naming it while `dir` is open
 * (the directory itself, or /proc/self/fd/N of a handle closed with `close`).
 */
async function openDirectory(
  root: string,
  relative: string,
): Promise<{ dir: Dir; base: string; close: () => Promise<void> }> {
  const full = relative === '' ? root : join(root, relative);
  if (full.length <= LONG_PATH) {
    const dir = await opendir(full);
    return { dir, base: full, close: () => dir.close().catch(() => undefined) };
  }
  let handle: FileHandle | undefined;
  let base = root;
  let step: string[] = [];
  const flags = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
  const descend = async () => {
    const next = await open(join(base, ...step), flags);
    await handle?.close();
    handle = next;
    base = `/proc/self/fd/${next.fd}`;
    step = [];
  };
  try {
    for (const name of relative.split('/')) {
      if (step.join('/').length + name.length + 1 > LONG_PATH) await descend();
      step.push(name);
    }
    if (step.length > 0) await descend();
    const dir = await opendir(base);
    const held = handle;
    return {
      dir,
      base,
      close: async () => {
        await dir.close().catch(() => undefined);
        await held?.close().catch(() => undefined);
      },
    };
  } catch (err) {
    await handle?.close().catch(() => undefined);
    throw err;
  }
}

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
    let opened;
    try {
      opened = await openDirectory(root, relative);
    } catch {
      continue; // not created yet, removed meanwhile, or not a directory any more
    }
    const { dir, base } = opened;
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
          await options.visit?.(join(base, entry.name), true);
        } else if (entry.isFile()) {
          try {
            const info = await lstat(join(base, entry.name));
            size = Math.max(info.size, info.blocks * 512);
          } catch {
            // removed while we walked: it takes no space any more
          }
          await options.visit?.(join(base, entry.name), false);
        } else {
          usage.special ??= path;
        }
        usage.bytes += Math.max(size, MIN_ENTRY_BYTES);
      }
    } finally {
      await opened.close();
    }
  }
  usage.incomplete = usage.entries > maxEntries || usage.bytes > maxBytes;
  return usage;
}
