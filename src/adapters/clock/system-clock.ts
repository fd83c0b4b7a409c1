import type { Clock } from '../../ports/ingest-ports.ts';

export const systemClock: Clock = { now: () => new Date() };
