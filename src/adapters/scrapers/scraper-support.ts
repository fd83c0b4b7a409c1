import { randomUUID } from 'node:crypto';
import type { RunIds } from '../../ports/run-ids.ts';

export function uuidRunIds(): RunIds {
  return { next: () => randomUUID() };
}
