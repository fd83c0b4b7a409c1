export { CsvParser, type CsvRow, detectDelimiter, MAX_ROW_CHARS } from './csv-parser.ts';
export { CsvFault, CsvRecordCheck } from './record-check.ts';
