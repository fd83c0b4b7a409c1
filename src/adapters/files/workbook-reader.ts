import { permanent } from '../../domain/ingest/failures.ts';
import { odsRows, odsSheetNames } from './ods-reader.ts';
import { xlsxRows, xlsxSheets } from './xlsx-reader.ts';
import { DEFAULT_ZIP_LIMITS, ZipArchive, type ZipLimits } from './zip-reader.ts';

// XLSX and ODS workbooks: sheet names, and the rows of one sheet as strings like a CSV's. The archive
// is read through ZipArchive's limits (yauzl), the XML through saxes (xml-stream.ts); the formats'
// own rules live in xlsx-reader.ts and ods-reader.ts.

type WorkbookFormat = 'xlsx' | 'ods';

export { excelSerialToIso } from './xlsx-reader.ts';

export async function workbookSheetNames(
  path: string,
  format: WorkbookFormat,
  limits: ZipLimits = DEFAULT_ZIP_LIMITS,
): Promise<string[]> {
  const archive = await ZipArchive.open(path, limits);
  try {
    return format === 'xlsx'
      ? (await xlsxSheets(archive)).map((sheet) => sheet.name)
      : await odsSheetNames(archive);
  } finally {
    archive.close();
  }
}

export async function* workbookRows(
  path: string,
  format: WorkbookFormat,
  sheetIndex: number,
  limits: ZipLimits = DEFAULT_ZIP_LIMITS,
): AsyncGenerator<string[]> {
  const archive = await ZipArchive.open(path, limits);
  try {
    if (format === 'xlsx') {
      const sheet = (await xlsxSheets(archive))[sheetIndex];
      if (!sheet) throw permanent('INVALID_FORMAT', `the workbook has no sheet ${sheetIndex + 1}`);
      yield* xlsxRows(archive, sheet.path);
    } else yield* odsRows(archive, sheetIndex);
  } finally {
    archive.close();
  }
}
