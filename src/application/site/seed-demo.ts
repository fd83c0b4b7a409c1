import type { NewEvent } from '../../domain/read/events.ts';
import {
  columnPositions,
  rowShapeProblem,
  rowToEvent,
  type SourceRow,
  uniqueIdFor,
} from '../../domain/ingest/rows.ts';
import type { FieldMapping } from '../../domain/ingest/schema.ts';
import type { EventStore } from '../../ports/ingest/event-store.ts';

const DEMO_CATALOG = {
  slug: 'demo',
  title: 'Demo data',
  description:
    'Real data loaded by `chronomap seed-demo` so that a fresh installation has something to show.',
  isPublic: true,
};
const DEMO_DATASET = {
  slug: 'usgs-earthquakes',
  title: 'USGS earthquakes',
  description: 'Earthquakes of magnitude 4.5 and above reported by the USGS (public domain).',
  isPublic: true,
};

/** The keys the demo catalog and dataset are kept under (migration 0750 gave existing ones theirs). */
const DEMO_KEYS = { catalog: 'demo', dataset: 'demo/usgs-earthquakes' };

/** The USGS export's columns, as an import's field mapping would name them. */
const USGS_MAPPING: FieldMapping = {
  timestamp: 'time',
  latitude: 'latitude',
  longitude: 'longitude',
  title: 'place',
  id: 'id',
};

const BATCH_SIZE = 500;

type SeedResult = {
  catalogId: number;
  datasetId: number;
  read: number;
  inserted: number;
  invalid: number;
};

/**
 * Loads a USGS-style CSV (time, latitude, longitude, place, id, ...) as demo events; safe to run
 * again. The rows come from the ingestion pipeline's file reader (the header first) and become
 * events by the pipeline's own row rules (dates, coordinates, typed values, the id column), so the
 * demo reads a file exactly as an import of it would.
 */
export async function seedDemo(
  deps: { events: EventStore },
  rows: AsyncIterable<SourceRow>,
): Promise<SeedResult> {
  // Found by the service's own keys: a user's catalog or dataset with the same slug (an import of
  // this very file takes its name) is never written into.
  const catalogId = await deps.events.ensureSystemCatalog(DEMO_KEYS.catalog, DEMO_CATALOG);
  const datasetId = await deps.events.ensureSystemDataset(DEMO_KEYS.dataset, catalogId, DEMO_DATASET);
  const result: SeedResult = { catalogId, datasetId, read: 0, inserted: 0, invalid: 0 };
  let header: string[] | null = null;
  let batch: NewEvent[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    result.inserted += (await deps.events.insertEvents(datasetId, batch)).inserted;
    batch = [];
  };
  for await (const row of rows) {
    if (!header) {
      // A header that cannot be read leaves nothing to map: every row counts as invalid.
      header = Array.isArray(row) ? row : [];
      continue;
    }
    if (Array.isArray(row) && row.length === 1 && row[0] === '') continue;
    result.read += 1;
    const event = toEvent(header, row);
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

function toEvent(header: string[], row: SourceRow): NewEvent | null {
  if (!Array.isArray(row) || rowShapeProblem(header, row, { shortRowsAllowed: false })) return null;
  const columns = columnPositions(header, USGS_MAPPING);
  const id = uniqueIdFor(row, columns.id, 'external-id');
  if (!id.ok || columns.timestamp < 0) return null;
  const converted = rowToEvent(header, row, columns, id.id, null);
  return converted.ok ? converted.event : null;
}
