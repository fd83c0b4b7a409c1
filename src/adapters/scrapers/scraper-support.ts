import { randomUUID } from 'node:crypto';
import type { RunIds } from '../../ports/scraper-collaborators.ts';

export function uuidRunIds(): RunIds {
  return { next: () => randomUUID() };
}
