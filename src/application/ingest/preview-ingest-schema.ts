import {
  compileAddress,
  composeAddress,
  isAddressTemplate,
  proposeAddressColumns,
} from '../../domain/ingest/geocoding/address-template.ts';
import { IngestFailure, permanent } from '../../domain/ingest/failures.ts';
import { assertUsableHeader, detectSchema, type FieldMapping } from '../../domain/ingest/schema.ts';
import type { SourceFiles } from '../../ports/ingest/source-files.ts';
import type { FileFormat } from '../../domain/ingest/imports.ts';

// The schema preview: what detect-schema would find in each sheet, from its first 1,000 rows,
// without creating anything. A sheet that cannot be read says why instead of failing the preview.

const SAMPLE_ROWS = 1000;
const SHOWN_ROWS = 5;

/**
 * City-, region- and country-like columns proposed as the address (to send back as
 * `fieldMapping.address`), with the first row's address as an example; none when the mapping
 * already reads several columns or the file has no such columns.
 */
function addressProposal(header: string[], rows: string[][], mapping: FieldMapping) {
  if (Array.isArray(mapping.address) || (mapping.address && isAddressTemplate(mapping.address))) return null;
  const columns = proposeAddressColumns(header);
  if (!columns) return null;
  const plan = compileAddress(columns, header);
  const example = rows.map((row) => composeAddress(plan, row)).find((address) => address !== '') ?? null;
  return { fieldMapping: { address: columns }, example };
}

export async function previewIngestSchema(
  deps: { files: SourceFiles },
  file: { storedPath: string; format: FileFormat },
  sheets: (string | null)[],
  mapping: FieldMapping,
  /** The preview's time budget: a sheet still being read when it ends says so instead of holding the request. */
  budget?: AbortSignal,
  /**
   * Read on past the sample to count every data row (the import wizard, for the quotas): `rowCount`
   * then says how many, and whether the budget let the count reach the end.
   */
  countRows = false,
) {
  const previews = [];
  for (const [index, name] of sheets.entries()) {
    const rows: string[][] = [];
    let header: string[] | null = null;
    let counted = 0;
    let complete = true;
    try {
      for await (const values of deps.files.rows(file, index)) {
        if (budget?.aborted) {
          // A sample already read is shown; only the count is cut short, and says so.
          if (rows.length >= SAMPLE_ROWS && countRows) {
            complete = false;
            break;
          }
          throw permanent('PREVIEW_TIME_BUDGET', 'the preview ran out of its time budget');
        }
        // Rows that cannot be read are left out of the preview; the import counts them as errors.
        if (!Array.isArray(values)) {
          if (!header)
            throw permanent('INVALID_FORMAT', `the header row cannot be read: ${values.malformed}`);
          continue;
        }
        if (!header) {
          header = values;
          assertUsableHeader(header);
        } else if (!(values.length === 1 && values[0] === '')) {
          counted += 1;
          if (rows.length < SAMPLE_ROWS) rows.push(values);
        }
        if (rows.length >= SAMPLE_ROWS && !countRows) break;
      }
      const schema = detectSchema(header ?? [], rows, mapping);
      const proposal = addressProposal(header ?? [], rows, schema.mapping);
      previews.push({
        index,
        name,
        rowsSampled: rows.length,
        fields: schema.fields,
        mapping: schema.mapping,
        sample: [header ?? [], ...rows.slice(0, SHOWN_ROWS)],
        ...(proposal ? { addressProposal: proposal } : {}),
        ...(countRows ? { rowCount: { total: counted, complete } } : {}),
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
