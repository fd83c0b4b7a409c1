import { type NewEvent, parseLocation, parseTimestamp, typedValue } from '../domain/events.ts';
import type { EventStore } from '../ports/event-store.ts';

export const DEMO_CATALOG = {
  slug: 'demo',
  title: 'Demo data',
  description:
    'Real data loaded by `chronomap seed-demo` so that a fresh installation has something to show.',
  isPublic: true,
};
export const DEMO_DATASET = {
  slug: 'usgs-earthquakes',
  title: 'USGS earthquakes',
  description: 'Earthquakes of magnitude 4.5 and above reported by the USGS (public domain).',
  isPublic: true,
};

const BATCH_SIZE = 500;

export type SeedResult = {
  catalogId: number;
  datasetId: number;
  read: number;
  inserted: number;
  invalid: number;
};

/** Loads USGS-style CSV rows (time, latitude, longitude, place, id, ...) as demo events; safe to run again. */
export async function seedDemo(
  deps: { events: EventStore },
  rows: AsyncIterable<Record<string, string>>,
): Promise<SeedResult> {
  const catalogId = await deps.events.ensureCatalog(DEMO_CATALOG);
  const datasetId = await deps.events.ensureDataset(catalogId, DEMO_DATASET);
  const result: SeedResult = { catalogId, datasetId, read: 0, inserted: 0, invalid: 0 };
  let batch: NewEvent[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    result.inserted += (await deps.events.insertEvents(datasetId, batch)).inserted;
    batch = [];
  };
  for await (const csvRow of rows) {
    result.read += 1;
    const event = toEvent(csvRow);
    if (!event) {
      result.invalid += 1;
      continue;
    }
    batch.push(event);
    if (batch.length >= BATCH_SIZE) await flush();
  }
  await flush();
  return result;
}

function toEvent(csvRow: Record<string, string>): NewEvent | null {
  if (!csvRow.id || !csvRow.time) return null;
  const data = Object.fromEntries(Object.entries(csvRow).map(([key, value]) => [key, typedValue(value)]));
  try {
    return {
      uniqueId: csvRow.id,
      title: csvRow.place || null,
      data,
      location: parseLocation(csvRow.latitude, csvRow.longitude),
      eventTimestamp: parseTimestamp(csvRow.time),
      isValid: true,
    };
  } catch {
    return null;
  }
}
