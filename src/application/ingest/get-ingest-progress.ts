import type { Viewer } from '../../domain/access.ts';
import {
  fileProgress,
  importJobView,
  type JobRecordForProgress,
  jobView,
} from '../../domain/ingest/progress.ts';
import type { Clock } from '../../ports/clock.ts';
import type { IngestFile, IngestJob } from '../../domain/ingest/imports.ts';
import type { IngestStore } from '../../ports/ingest/ingest-store.ts';
import { accessibleFile, type ImportAccessDeps } from './import-access.ts';
import type { GeocodeOutput } from './stages/outputs.ts';

// The progress view of an ingest file (spec: GET /api/ingest/{ingestId}/progress) and the earlier
// import-named variant.

async function jobRecords(store: IngestStore, jobs: IngestJob[]): Promise<JobRecordForProgress[]> {
  return Promise.all(
    jobs.map(async (job) => {
      const stages = await store.stages(job.id);
      const output = <T>(stage: string) => stages.find((s) => s.stage === stage)?.output as T | undefined;
      const analyzed = output<{ rowsTotal: number; internal: number; external: number }>(
        'analyze-duplicates',
      );
      const validated = output<{
        invalidRows: number;
        validRows: number;
        drift: unknown;
        rowErrors: unknown[];
      }>('validate-schema');
      const created = stages.find((s) => s.stage === 'create-events');
      const geocode = stages.find((s) => s.stage === 'geocode-batch');
      const invalid = Math.max(validated?.invalidRows ?? 0, created?.counters.invalid ?? 0);
      return {
        id: job.id,
        datasetId: job.datasetId,
        datasetName: job.datasetName,
        stage: job.stage,
        failedStage: job.stage === 'failed' ? (job.errorLog?.failedStage ?? null) : null,
        stages,
        errors: invalid,
        duplicates: { internal: analyzed?.internal ?? 0, external: analyzed?.external ?? 0 },
        schemaValidation: validated
          ? {
              isValid: true,
              validRows: validated.validRows,
              invalidRows: validated.invalidRows,
              drift: validated.drift,
              ...(job.reviewReasons ? { requiresApproval: !job.approvedAt, reasons: job.reviewReasons } : {}),
            }
          : null,
        results:
          created?.status === 'completed' || created?.status === 'in_progress'
            ? { ...created.counters, ...geocodingResults(geocode?.output) }
            : null,
        geocoding: geocode ? { total: geocode.rowsTotal, done: geocode.rowsProcessed } : null,
        rowsTotal: analyzed?.rowsTotal ?? 0,
      };
    }),
  );
}

/**
 * The geocoding part of an import's results: distinct addresses located, not found, and found but
 * under the confidence threshold (docs/ingestion.md, "Reading a geocoding result").
 */
function geocodingResults(output: unknown): { geocoding?: Record<string, number> } {
  const geocoded = output as GeocodeOutput | undefined;
  if (!geocoded || geocoded.addresses === 0) return {};
  return {
    geocoding: {
      addresses: geocoded.addresses,
      located: geocoded.found,
      notFound: geocoded.notFound ?? geocoded.failed,
      lowConfidence: geocoded.lowConfidence ?? 0,
    },
  };
}

/** The caller's view of an ingest file's progress: 401 anonymous, 404 missing or not theirs. */
export async function getIngestProgress(
  deps: { store: IngestStore; clock: Clock; hierarchy: ImportAccessDeps['hierarchy'] },
  viewer: Viewer,
  fileId: number,
  variant: 'ingest' | 'import',
) {
  return ingestProgressOf(deps, await accessibleFile(deps, viewer, fileId), variant);
}

/** The progress of a file the caller was already allowed to see. */
export async function ingestProgressOf(
  deps: { store: IngestStore; clock: Clock },
  file: IngestFile,
  variant: 'ingest' | 'import',
) {
  const fileId = file.id;
  const jobs = await deps.store.jobsOfFile(fileId);
  const records = await jobRecords(deps.store, jobs);
  const now = deps.clock.now().getTime();
  const views = records.map((record) => jobView(record, now));
  const overall = fileProgress(views);
  const processed = jobs.filter((job) => job.stage === 'completed' || job.stage === 'failed').length;
  const common = {
    id: file.id,
    status: file.status,
    originalName: file.originalName,
    catalogId: file.catalogId,
    datasetsCount: jobs.length,
    datasetsProcessed: processed,
    overallProgress: overall.overallProgress,
    estimatedCompletionTime: overall.estimatedCompletionTime,
    ...(file.errorLog.length ? { errorLog: file.errorLog } : {}),
    ...(file.completedAt ? { completedAt: file.completedAt } : {}),
    createdAt: file.createdAt,
  };
  if (variant === 'import') {
    return {
      type: 'import-file' as const,
      ...common,
      jobs: records.map((record) => importJobView(record, now)),
    };
  }
  return { type: 'ingest-file' as const, ...common, jobs: views };
}
