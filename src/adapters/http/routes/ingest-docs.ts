import type { IngestFile, IngestJob } from '../../../ports/ingest-store.ts';

// Records as the collection endpoints show them (Payload-style `{doc}` bodies).

export function jobDoc(job: IngestJob) {
  return {
    id: job.id,
    ingestFile: job.ingestFileId,
    sheetIndex: job.sheetIndex,
    sheetName: job.sheetName,
    dataset: job.datasetId,
    datasetName: job.datasetName,
    stage: job.stage,
    config: job.config,
    errorLog: job.errorLog,
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
    jobs: jobs.map(jobDoc),
    createdAt: file.createdAt,
    updatedAt: file.updatedAt,
    completedAt: file.completedAt,
  };
}
