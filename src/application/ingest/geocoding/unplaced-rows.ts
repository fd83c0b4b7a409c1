import type { Viewer } from '../../../domain/access.ts';
import { DomainError, ValidationError } from '../../../domain/errors.ts';
import {
  type GeocodeAlternative,
  type LocatedByGeocoder,
  locatedByGeocoder,
} from '../../../domain/ingest/geocoding/located-by.ts';
import type { IngestFile, IngestJob } from '../../../domain/ingest/imports.ts';
import {
  addressToGeocode,
  checkRow,
  type ColumnPositions,
  columnPositions,
  uniqueIdFor,
} from '../../../domain/ingest/rows.ts';
import type { FieldMapping } from '../../../domain/ingest/schema.ts';
import type { Location } from '../../../domain/read/events.ts';
import type { GeocodeOutcome, Geocoder } from '../../../ports/ingest/geocoder.ts';
import type { Placement } from '../../../ports/ingest/event-locations.ts';
import type { IngestStore } from '../../../ports/ingest/ingest-store.ts';
import type { SourceFiles } from '../../../ports/ingest/source-files.ts';
import { accessibleJob, type ImportAccessDeps } from '../import-access.ts';
import { dataRows, idColumnIndex } from '../job-rows.ts';
import type { DetectOutput } from '../stages/outputs.ts';

// Issue 28 §5: the rows of an import the geocoder could not place (not found, or found under the
// confidence threshold), counted, listed and fixed afterwards by the owner of the import. The
// stored answers of geocode-batch (per distinct address) say which addresses failed; the file,
// read again with the job's mapping and id strategy, says which rows had them and which events they
// became; an event that has a location by now (fixed meanwhile) is placed.

export type UnplacedDeps = ImportAccessDeps & {
  store: Pick<IngestStore, 'stages' | 'jobGeocodes' | 'unlocatedEvents' | 'placeEvents'>;
  files: SourceFiles;
  geocoder?: Geocoder | null;
};

type Reason = 'not-found' | 'low-confidence';

/** The place a low-confidence answer found and refused: what the owner can check. */
type BestCandidate = {
  name: string | null;
  country: string | null;
  region: string | null;
  confidence: number;
  /** Distinct places of the name that fit (null when the provider does not say). */
  candidateCount: number | null;
  /** The places an ambiguous address may mean, best first (empty when the provider does not say). */
  alternatives: GeocodeAlternative[];
};

export type UnplacedRow = { row: number; address: string; reason: Reason; candidate: BestCandidate | null };

export type GeocodingReport = {
  jobId: number;
  /** False while the import has not stored its events, or when it geocoded nothing. */
  geocoded: boolean;
  /** Rows (events) whose location was looked up by their address. */
  counts: { rows: number; located: number; notFound: number; lowConfidence: number };
  unplaced: UnplacedRow[];
  /** The file's columns: what a fix may name. */
  columns: string[];
};

/** Where a fix takes the location of the rows not placed: other address columns, or coordinates. */
export type PlacementFix = { address: string[] } | { latitude: string; longitude: string };

const MAX_ADDRESS_COLUMNS = 8;
/** Distinct addresses one fix asks the geocoder for: an online provider answers about one a second. */
export const MAX_FIX_ADDRESSES = 200;

type JobRows = { job: IngestJob; file: IngestFile; schema: DetectOutput; datasetId: number };

/** The job, when it is the caller's and its events are stored; null while they are not. */
async function finishedJob(deps: UnplacedDeps, viewer: Viewer, jobId: number): Promise<JobRows | null> {
  const job = await accessibleJob(deps, viewer, jobId);
  const file = await deps.store.getFile(job.ingestFileId);
  const records = await deps.store.stages(jobId);
  const detect = records.find((r) => r.stage === 'detect-schema')?.output as DetectOutput | undefined;
  const geocode = records.find((r) => r.stage === 'geocode-batch');
  const created = records.find((r) => r.stage === 'create-events');
  if (!file || !detect || job.datasetId === null) return null;
  if (geocode?.status !== 'completed' || created?.status !== 'completed') return null;
  return { job, file, schema: detect, datasetId: job.datasetId };
}

type Candidate = UnplacedRow & { uniqueId: string; header: string[]; values: string[] };

/**
 * The rows whose address the import could not place and whose event still has no location, read
 * as create-events read them (the first occurrence of a key is the event), with the count of rows
 * that had an address looked up.
 */
async function scanUnplaced(
  deps: UnplacedDeps,
  target: JobRows,
  geocodes: Map<string, GeocodeOutcome>,
): Promise<{ rows: number; unplaced: Candidate[]; columns: string[] }> {
  const context = { job: target.job, file: target.file };
  const seen = new Set<string>();
  const failed: Candidate[] = [];
  let rows = 0;
  let names: string[] = [];
  let columns: ColumnPositions | null = null;
  let idIndex = -1;
  for await (const { header, values, row, problem } of dataRows(deps, context)) {
    if (problem) continue;
    if (!columns) {
      names = header;
      columns = columnPositions(header, target.schema.mapping);
      idIndex = idColumnIndex(header, target.schema, context);
    }
    const key = uniqueIdFor(values, idIndex, target.job.config.idStrategy);
    if (!key.ok || seen.has(key.id)) continue;
    seen.add(key.id);
    if (!checkRow(header, values, columns).ok) continue;
    const address = addressToGeocode(values, columns);
    const outcome = address ? geocodes.get(address) : undefined;
    if (!address || !outcome) continue;
    rows += 1;
    if ('failure' in outcome)
      failed.push({ ...unplacedRow(row, address, outcome), uniqueId: key.id, header, values });
  }
  const still = await deps.store.unlocatedEvents(
    target.datasetId,
    failed.map((c) => c.uniqueId),
  );
  return { rows, unplaced: failed.filter((c) => still.has(c.uniqueId)), columns: names };
}

function unplacedRow(row: number, address: string, outcome: GeocodeOutcome): UnplacedRow {
  const low = 'failure' in outcome && outcome.lowConfidence === true;
  return {
    row,
    address,
    reason: low ? 'low-confidence' : 'not-found',
    candidate:
      low && outcome.match
        ? {
            name: outcome.match.matchedName,
            country: outcome.match.matchedCountry,
            region: outcome.match.matchedRegion,
            confidence: outcome.confidence ?? 0,
            candidateCount: outcome.match.candidateCount ?? null,
            alternatives: outcome.match.alternatives ?? [],
          }
        : null,
  };
}

function reportOf(jobId: number, rows: number, unplaced: Candidate[], columns: string[]): GeocodingReport {
  const lowConfidence = unplaced.filter((c) => c.reason === 'low-confidence').length;
  return {
    jobId,
    geocoded: rows > 0,
    counts: {
      rows,
      located: rows - unplaced.length,
      notFound: unplaced.length - lowConfidence,
      lowConfidence,
    },
    unplaced: unplaced.map(({ row, address, reason, candidate }) => ({ row, address, reason, candidate })),
    columns,
  };
}

const EMPTY = (jobId: number): GeocodingReport => ({
  jobId,
  geocoded: false,
  counts: { rows: 0, located: 0, notFound: 0, lowConfidence: 0 },
  unplaced: [],
  columns: [],
});

/** The import job's geocoding outcome in rows: 401 anonymous, 404 missing or not the caller's. */
export async function geocodingReport(
  deps: UnplacedDeps,
  viewer: Viewer,
  jobId: number,
): Promise<GeocodingReport> {
  const target = await finishedJob(deps, viewer, jobId);
  if (!target) return EMPTY(jobId);
  const geocodes = await deps.store.jobGeocodes(jobId);
  const { rows, unplaced, columns } = await scanUnplaced(deps, target, geocodes);
  return reportOf(jobId, rows, unplaced, columns);
}

/**
 * The job's mapping with the fix's columns in place of its address or coordinates, checked against
 * the file's header (a name it does not have is a 400); the rest (the timestamp) reads as at import.
 */
function fixMapping(fix: PlacementFix, header: string[], mapping: FieldMapping): FieldMapping {
  const names = 'address' in fix ? fix.address : [fix.latitude, fix.longitude];
  if ('address' in fix && (names.length === 0 || names.length > MAX_ADDRESS_COLUMNS))
    throw new ValidationError(`address takes 1 to ${MAX_ADDRESS_COLUMNS} columns`, { field: 'address' });
  const missing = names.filter((name) => !header.includes(name));
  if (missing.length)
    throw new ValidationError(`the file has no column ${missing.map((m) => JSON.stringify(m)).join(', ')}`, {
      field: 'address' in fix ? 'address' : 'latitude',
      code: 'UNKNOWN_COLUMN',
    });
  return 'address' in fix
    ? { ...mapping, address: fix.address }
    : { ...mapping, latitude: fix.latitude, longitude: fix.longitude, coordinates: undefined };
}

/** Where a row lands under the fix's columns: its coordinates, or its new address's answer. */
function placementOf(
  candidate: Candidate,
  columns: ColumnPositions,
  answers: Map<string, GeocodeOutcome>,
): Placement | null {
  if (columns.latitude >= 0) {
    const checked = checkRow(candidate.header, candidate.values, columns);
    return checked.ok && checked.location
      ? { uniqueId: candidate.uniqueId, location: checked.location, locatedBy: null }
      : null;
  }
  const address = addressToGeocode(candidate.values, columns);
  const outcome = address ? answers.get(address) : undefined;
  if (!address || !outcome || !('location' in outcome)) return null;
  const location: Location = outcome.location;
  const locatedBy: LocatedByGeocoder = locatedByGeocoder(address, outcome);
  return { uniqueId: candidate.uniqueId, location, locatedBy };
}

type FixResult = GeocodingReport & { placed: number; notAsked: number };

/**
 * Places the rows not placed, and only those, by other address columns (through the import's
 * geocoder chain and its cache, at the rate of an upload) or by coordinate columns. Each event is
 * set once: the store sets only locations still empty. Columns the file lacks are a 400 before
 * anything changes; a job still importing is a 409.
 */
export async function placeUnplacedRows(
  deps: UnplacedDeps,
  viewer: Viewer,
  jobId: number,
  fix: PlacementFix,
): Promise<FixResult> {
  const target = await finishedJob(deps, viewer, jobId);
  if (!target)
    throw new DomainError('conflict', `ingest job ${jobId} has no geocoded rows to fix (yet)`, {
      code: 'NOTHING_TO_PLACE',
    });
  const geocodes = await deps.store.jobGeocodes(jobId);
  const scan = await scanUnplaced(deps, target, geocodes);
  const { rows, unplaced } = scan;
  const columns = columnPositions(scan.columns, fixMapping(fix, scan.columns, target.schema.mapping));
  if ('address' in fix && !deps.geocoder)
    throw new DomainError('conflict', 'geocoding is off (GEOCODER=off): give coordinate columns', {
      code: 'GEOCODING_OFF',
    });
  let answers = new Map<string, GeocodeOutcome>();
  let notAsked = 0;
  if ('address' in fix && deps.geocoder && unplaced.length) {
    const wanted = [...new Set(unplaced.map((c) => addressToGeocode(c.values, columns)))].filter(
      (a): a is string => a !== null,
    );
    const asked = wanted.slice(0, MAX_FIX_ADDRESSES);
    notAsked = wanted.length - asked.length;
    answers = await deps.geocoder.geocode(asked, { scheduled: false });
  }
  const placements = new Map<string, Placement>();
  for (const candidate of unplaced) {
    const placement = placementOf(candidate, columns, answers);
    if (placement) placements.set(placement.uniqueId, placement);
  }
  const placed = await deps.store.placeEvents(target.datasetId, [...placements.values()]);
  const left = unplaced.filter((c) => !placements.has(c.uniqueId));
  return { ...reportOf(jobId, rows, left, scan.columns), placed, notAsked };
}
