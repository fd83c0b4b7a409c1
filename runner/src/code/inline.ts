// Writes an inline `code` map (filename -> content) into the run's code directory. Names are
// checked before anything is written: no `..`, no leading `/`, nothing that normalises outside
// the directory, and files are created exclusively without following symlinks.
import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { badRequest } from '../errors.ts';

/** Returns the normalised relative path, or throws a 400 naming the bad file. */
export function checkRelativePath(name: string, field: string): string {
  const fail = (why: string) => badRequest('INVALID_PATH', `${field} '${name}' ${why}`);
  if (name.length === 0 || name.length > 1024) throw fail('must be 1 to 1024 characters');
  if (name.includes('\0') || name.includes('\\')) throw fail('contains a NUL or a backslash');
  if (name.startsWith('/')) throw fail('must not start with /');
  if (name.split('/').includes('..')) throw fail('must not contain ..');
  const normalised = posix.normalize(name);
  if (
    posix.isAbsolute(normalised) ||
    normalised.startsWith('../') ||
    normalised === '..' ||
    normalised === '.'
  ) {
    throw fail('points outside the code directory');
  }
  if (normalised.endsWith('/')) throw fail('names a directory, not a file');
  return normalised;
}

export function checkCodeMap(code: Record<string, string>, maxBytes: number): Map<string, string> {
  const files = new Map<string, string>();
  let total = 0;
  for (const [name, content] of Object.entries(code)) {
    const path = checkRelativePath(name, 'code file');
    if (files.has(path)) throw badRequest('INVALID_PATH', `code file '${name}' is given twice`);
    total += Buffer.byteLength(content);
    files.set(path, content);
  }
  if (files.size === 0) throw badRequest('INVALID_CODE', 'code must hold at least one file');
  for (const path of files.keys()) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const parent = parts.slice(0, i).join('/');
      if (files.has(parent))
        throw badRequest('INVALID_PATH', `code file '${parent}' is also used as a directory by '${path}'`);
    }
  }
  if (total > maxBytes)
    throw badRequest('CODE_TOO_LARGE', `code is ${total} bytes, the limit is ${maxBytes}`);
  return files;
}

export async function writeCodeFiles(codeDir: string, files: Map<string, string>): Promise<void> {
  for (const [path, content] of files) {
    const target = join(codeDir, path);
    try {
      await mkdir(dirname(target), { recursive: true, mode: 0o755 });
      // O_EXCL + O_NOFOLLOW: never write through something that already exists at that name.
      const handle = await open(
        target,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o644,
      );
      try {
        await handle.writeFile(content);
      } finally {
        await handle.close();
      }
    } catch (err) {
      // e.g. both "lib" and "lib/x.py" given: one name is used as a file and as a directory.
      throw badRequest(
        'INVALID_PATH',
        `code file '${path}' cannot be written: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
  }
}
