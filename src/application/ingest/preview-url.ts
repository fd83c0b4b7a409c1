import { ValidationError } from '../../domain/errors.ts';
import { IngestFailure } from '../../domain/ingest/failures.ts';
import { assertFetchableUrl } from '../../domain/ingest/schedules.ts';
import type { FieldMapping } from '../../domain/ingest/schema.ts';
import type { FileStore } from '../../ports/ingest/file-store.ts';
import type { FileFormat } from '../../domain/ingest/imports.ts';
import type { UrlFetcher } from '../../ports/url-fetcher.ts';
import type { SourceFiles } from '../../ports/ingest/source-files.ts';
import { previewIngestSchema } from './preview-ingest-schema.ts';

// The schema preview of a URL (the wizard's URL variant, before a scheduled import is created):
// fetched through the SSRF-guarded fetcher, a CSV only up to its first `csvPrefixBytes` (cut back to
// the last whole line), a workbook whole within the fetcher's size limit; the file is removed after.

export type UrlPreviewDeps = { fetcher: UrlFetcher; fileStore: FileStore; files: SourceFiles };

function formatOf(fileName: string, contentType: string | null): FileFormat {
  const name = fileName.toLowerCase();
  const type = (contentType ?? '').toLowerCase();
  if (name.endsWith('.xlsx') || type.includes('spreadsheetml')) return 'xlsx';
  if (name.endsWith('.ods') || type.includes('opendocument.spreadsheet')) return 'ods';
  return 'csv';
}

/** What went wrong fetching, in words and a code the caller can act on (400, nothing stored). */
function fetchProblem(url: string, error: unknown): ValidationError {
  const code =
    error instanceof IngestFailure
      ? error.code
      : (error as { code?: string }).code === 'ETIMEDOUT'
        ? 'URL_TIMEOUT'
        : 'URL_FETCH_FAILED';
  const message = error instanceof Error ? error.message : String(error);
  return new ValidationError(`${url} could not be previewed: ${message}`, { field: 'url', code });
}

export async function previewUrl(
  deps: UrlPreviewDeps,
  input: { url: string; mapping: FieldMapping; csvPrefixBytes: number },
  budget?: AbortSignal,
) {
  const url = assertFetchableUrl(input.url);
  let content: Buffer;
  let format: FileFormat;
  let fileName: string;
  try {
    const fetched = await deps.fetcher.fetch(url);
    fileName = fetched.fileName;
    format = formatOf(fetched.fileName, fetched.contentType);
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of fetched.body) {
      chunks.push(Buffer.from(chunk));
      bytes += chunk.length;
      // A CSV's first rows are enough: leaving the loop stops reading (the connection is closed).
      if (format === 'csv' && bytes >= input.csvPrefixBytes) break;
    }
    content = Buffer.concat(chunks);
  } catch (error) {
    throw fetchProblem(url, error);
  }
  if (format === 'csv' && content.length >= input.csvPrefixBytes) {
    const lastLineEnd = content.subarray(0, input.csvPrefixBytes).lastIndexOf(10) + 1;
    if (lastLineEnd <= 0) {
      throw new ValidationError('the first line of the file is longer than the preview reads', {
        field: 'url',
        code: 'PREVIEW_LINE_TOO_LONG',
      });
    }
    content = content.subarray(0, lastLineEnd);
  }
  const extension = format === 'csv' ? '.csv' : `.${format}`;
  const stored = await deps.fileStore.writeNew('upload', extension, content);
  try {
    const file = { storedPath: stored.storedPath, format };
    let sheets: (string | null)[];
    try {
      sheets = await deps.files.sheets(file);
    } catch (error) {
      if (error instanceof IngestFailure)
        throw new ValidationError(error.message, { field: 'url', code: error.code });
      throw error;
    }
    return { fileName, format, sheets: await previewIngestSchema(deps, file, sheets, input.mapping, budget) };
  } finally {
    await deps.fileStore.remove(stored.storedPath);
  }
}
