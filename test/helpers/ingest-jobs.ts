import type { IngestJob } from '../../src/domain/ingest/imports.ts';
import { DEFAULT_JOB_CONFIG } from '../../src/domain/ingest/settings.ts';

/**
 * Job 7 of ingest file 3, failed at create-events with a recoverable network error after one
 * retry: the starting point of the recovery use cases' tests, each changing what it is about.
 */
export const failedJob = (overrides: Partial<IngestJob> = {}): IngestJob => ({
  id: 7,
  ingestFileId: 3,
  sheetIndex: 0,
  sheetName: null,
  datasetId: 1,
  datasetName: 'd',
  datasetSlug: 'd',
  stage: 'failed',
  config: DEFAULT_JOB_CONFIG,
  errorLog: {
    lastError: 'connect ECONNREFUSED',
    code: 'ECONNREFUSED',
    failedStage: 'create-events',
    classification: { type: 'recoverable', retryable: true, reason: 'network error (ECONNREFUSED)' },
    failedAt: '2026-01-01T00:00:00.000Z',
  },
  reviewReasons: null,
  approvedAt: null,
  retryAttempts: 1,
  lastRetryAt: null,
  nextRetryAt: null,
  failedAt: '2026-01-01T00:00:00.000Z',
  completedAt: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  ...overrides,
});
