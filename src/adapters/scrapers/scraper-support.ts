import { randomUUID } from 'node:crypto';
import type { RunIds } from '../../ports/scrapers/run-ids.ts';

export function uuidRunIds(): RunIds {
  return { next: () => randomUUID() };
}
