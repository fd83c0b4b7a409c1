import { IngestFailure, permanent } from '../../domain/ingest/failures.ts';
import { assertUsableHeader, detectSchema, type FieldMapping } from '../../domain/ingest/schema.ts';
import type { SourceFiles } from '../../ports/source-files.ts';
import type { FileFormat } from '../../ports/ingest-job-store.ts';

// The schema preview: what detect-schema would find in each sheet, from its first 1,000 rows,
// without creating anything. A sheet that cannot be read says why instead of failing the preview.

const SAMPLE_ROWS = 1000;
const SHOWN_ROWS = 5;

export async function previewIngestSchema(
  deps: { files: SourceFiles },
  file: { storedPath: string; format: FileFormat },
  sheets: (string | null)[],
  mapping: FieldMapping,
  /** The preview's time budget: a sheet still being read when it ends says so instead of holding the request. */
  budget?: AbortSignal,
) {
  const previews = [];
  for (const [index, name] of sheets.entries()) {
    const rows: string[][] = [];
    let header: string[] | null = null;
    try {
      for await (const values of deps.files.rows(file, index)) {
        if (budget?.aborted) throw permanent('PREVIEW_TIME_BUDGET', 'the preview ran out of its time budget');
        // Rows that cannot be read are left out of the preview; the import counts them as errors.
        if (!Array.isArray(values)) {
          if (!header)
            throw permanent('INVALID_FORMAT', `the header row cannot be read: ${values.malformed}`);
          continue;
        }
        if (!header) {
          header = values;
          assertUsableHeader(header);
        } else if (!(values.length === 1 && values[0] === '')) rows.push(values);
        if (rows.length >= SAMPLE_ROWS) break;
      }
      const schema = detectSchema(header ?? [], rows, mapping);
      previews.push({
        index,
        name,
        rowsSampled: rows.length,
        fields: schema.fields,
        mapping: schema.mapping,
        sample: [header ?? [], ...rows.slice(0, SHOWN_ROWS)],
        ...(header ? {} : { problem: 'the file is empty' }),
      });
    } catch (error) {
      if (!(error instanceof IngestFailure)) throw error;
      previews.push({
        index,
        name,
        rowsSampled: 0,
        fields: [],
        mapping: {},
        sample: [],
        problem: error.message,
      });
    }
  }
  return previews;
}
