import type { FetchLimits } from './guarded-url-fetcher.ts';

// A URL preview (POST /api/ingest/preview-url) answers while someone waits: it fetches with the
// scheduled fetches' guard but tighter limits, a workbook up to the upload preview's 10 MiB and at
// most 10 s in all.

const PREVIEW_MAX_BYTES = 10 * 1024 * 1024;
const PREVIEW_TIMEOUT_MS = 10_000;

export function previewFetchLimits(limits: FetchLimits): FetchLimits {
  return {
    ...limits,
    maxBytes: Math.min(limits.maxBytes, PREVIEW_MAX_BYTES),
    timeoutMs: Math.min(limits.timeoutMs, PREVIEW_TIMEOUT_MS),
  };
}
