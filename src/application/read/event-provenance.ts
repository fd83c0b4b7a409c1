import { canReadDataset, canWriteDataset, type Viewer } from '../../domain/access.ts';
import { NotFoundError } from '../../domain/errors.ts';
import {
  type EventProvenance,
  provenancePagePath,
  provenanceSource,
  type ShownProvenance,
} from '../../domain/read/provenance.ts';
import type { EventRecord, EventProvenanceReader } from '../../ports/read/event-provenance.ts';

// GET /api/v1/events/{id} and the page /events/{id}/provenance (issue 38 §5). Whoever may read the
// event's dataset (domain/access.ts) reads the event; its provenance shows unless the dataset's owner
// turned it off, and then the page does not exist (404) and the field says `{"shown": false}`.

type Deps = { provenance: EventProvenanceReader };

async function readableRecord(deps: Deps, viewer: Viewer, eventId: number): Promise<EventRecord> {
  const record = await deps.provenance.eventRecord(eventId);
  if (!record || !canReadDataset(viewer, record.access.catalog, record.access.dataset)) {
    throw new NotFoundError(`event ${eventId} does not exist`, { code: 'EVENT_NOT_FOUND' });
  }
  // Location privacy: exact for those who may write the dataset, the generalised event for the rest.
  const { generalised } = record;
  if (generalised && !canWriteDataset(viewer, record.access.catalog, record.access.dataset)) {
    return {
      ...record,
      event: { ...record.event, location: generalised.location, data: generalised.data, locatedBy: null },
    };
  }
  return record;
}

function shownProvenance(record: EventRecord): ShownProvenance {
  return {
    shown: true,
    importJob: record.importJob,
    row: record.row,
    sheet: record.sheet,
    source: record.file ? provenanceSource(record.file) : null,
    storedAt: record.storedAt,
    changedAt: record.changedAt,
    page: provenancePagePath(record.event.id),
  };
}

/** One event as /api/v1/events shows it, with its whole provenance (or `{"shown": false}`). */
export async function getEvent(
  deps: Deps,
  viewer: Viewer,
  eventId: number,
): Promise<EventRecord['event'] & { provenance: EventProvenance }> {
  const record = await readableRecord(deps, viewer, eventId);
  const provenance: EventProvenance = record.provenancePublic ? shownProvenance(record) : { shown: false };
  return { ...record.event, provenance };
}

/** The provenance page's content: 404 when the event cannot be read or its dataset hides provenance. */
export async function getProvenancePage(
  deps: Deps,
  viewer: Viewer,
  eventId: number,
): Promise<{ event: EventRecord['event']; provenance: ShownProvenance }> {
  const record = await readableRecord(deps, viewer, eventId);
  if (!record.provenancePublic) {
    throw new NotFoundError(`event ${eventId} has no public provenance`, { code: 'EVENT_NOT_FOUND' });
  }
  return { event: record.event, provenance: shownProvenance(record) };
}
