import { readdirSync } from 'node:fs';
import path from 'node:path';

// Where tap keeps each test file's output of its last run (.tap/test-results/<file>.tap), read by
// the scripts that report on a run (slowest-tests.ts, failed-tests.ts).
export const tapResultsDir = path.join(import.meta.dirname, '..', '.tap', 'test-results');

/** Every .tap file under a folder, at any depth; none when the folder does not exist. */
export function tapFiles(dir: string = tapResultsDir): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return tapFiles(full);
    return entry.name.endsWith('.tap') ? [full] : [];
  });
}

/** A result file's test file, relative to the results folder. */
export function testOf(file: string): string {
  return path.relative(tapResultsDir, file).replace(/\.tap$/, '');
}
