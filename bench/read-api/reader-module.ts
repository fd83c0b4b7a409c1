import { existsSync } from 'node:fs';
import path from 'node:path';

// Where a checkout keeps the EventReader's postgres implementation: the read feature's folder, or
// where older checkouts (given to build-cost.ts and page-cost.ts with --code) still have it.
const READER_FILES = [
  'src/adapters/postgres/read/index.ts',
  'src/adapters/postgres/read-model/index.ts',
  'src/adapters/postgres/event-reader.ts',
];

// The use case behind GET /api/v1/events, by feature since the folder move, loose before it.
const LIST_EVENTS_FILES = ['src/application/read/list-events.ts', 'src/application/list-events.ts'];

const firstIn = (root: string, files: string[]): string =>
  files.find((file) => existsSync(path.join(root, file))) ?? (files[0] as string);

export const readerModule = (root: string): string => firstIn(root, READER_FILES);
export const listEventsModule = (root: string): string => firstIn(root, LIST_EVENTS_FILES);
