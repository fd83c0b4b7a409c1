import { existsSync } from 'node:fs';
import path from 'node:path';

// Where a checkout keeps the EventReader's postgres implementation: the read-model folder, or the
// single file older checkouts (given to build-cost.ts and page-cost.ts with --code) still have.
const READER_FILES = ['src/adapters/postgres/read-model/index.ts', 'src/adapters/postgres/event-reader.ts'];

export function readerModule(root: string): string {
  return READER_FILES.find((file) => existsSync(path.join(root, file))) ?? (READER_FILES[0] as string);
}
