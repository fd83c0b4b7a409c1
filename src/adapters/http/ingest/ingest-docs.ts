import { type StageNaming, spellStage, stageName } from '../../../domain/ingest/stages.ts';
import type { IngestFile, IngestJob, JobErrorLog } from '../../../domain/ingest/imports.ts';

// Records as the collection endpoints show them (Payload-style `{doc}` bodies).

/** The error log with its stage names spelled for the routes' naming. */
function errorLogDoc(naming: StageNaming, log: JobErrorLog | null) {
  if (!log) return null;
  return {
    ...log,
    ...(log.failedStage ? { failedStage: stageName(naming, log.failedStage) } : {}),
    ...(log.recoveryAttempt
      ? {
          recoveryAttempt: {
            ...log.recoveryAttempt,
            recoveryStage: spellStage(naming, log.recoveryAttempt.recoveryStage),
          },
        }
      : {}),
  };
}

export function jobDoc(job: IngestJob, naming: StageNaming = 'ingest') {
  return {
    id: job.id,
    ingestFile: job.ingestFileId,
    sheetIndex: job.sheetIndex,
    sheetName: job.sheetName,
    dataset: job.datasetId,
    datasetName: job.datasetName,
    stage: stageName(naming, job.stage),
    config: job.config,
    errorLog: errorLogDoc(naming, job.errorLog),
    reviewReasons: job.reviewReasons,
    approvedAt: job.approvedAt,
    retryAttempts: job.retryAttempts,
    lastRetryAt: job.lastRetryAt,
    nextRetryAt: job.nextRetryAt,
    failedAt: job.failedAt,
    completedAt: job.completedAt,
    createdAt: job.createdAt,
  };
}

export function fileDoc(file: IngestFile, jobs: IngestJob[]) {
  return {
    id: file.id,
    originalName: file.originalName,
    status: file.status,
    catalog: file.catalogId,
    datasets: jobs.flatMap((job) => (job.datasetId === null ? [] : [job.datasetId])),
    sizeBytes: file.sizeBytes,
    format: file.format,
    source: file.source,
    uploadedBy: file.uploadedBy,
    settings: file.settings,
    errorLog: file.errorLog,
    jobs: jobs.map((job) => jobDoc(job)),
    createdAt: file.createdAt,
    updatedAt: file.updatedAt,
    completedAt: file.completedAt,
  };
}
