import { readFile } from 'node:fs/promises';
import { permanent } from '../../domain/ingest/failures.ts';
import { MAX_COLUMNS } from './limits.ts';
import { DEFAULT_ZIP_LIMITS, ZipArchive, type ZipLimits } from './zip-reader.ts';

// XLSX (Office Open XML) and ODS (OpenDocument) workbooks: sheet names, and the rows of one sheet as
// strings like a CSV's. Dates come out as ISO 8601 (XLSX stores serial day numbers with a date
// number format; ODS stores office:date-value). The archive is read through ZipArchive's limits.

export type WorkbookFormat = 'xlsx' | 'ods';

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

export function decodeXml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_m, entity: string) => {
    if (entity[0] === '#') {
      const code =
        entity[1] === 'x' || entity[1] === 'X'
          ? Number.parseInt(entity.slice(2), 16)
          : Number(entity.slice(1));
      return Number.isFinite(code) ? String.fromCodePoint(code) : '';
    }
    return ENTITIES[entity.toLowerCase()] ?? '';
  });
}

const attribute = (tag: string, name: string): string | null => {
  const match = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return match?.[1] !== undefined ? decodeXml(match[1]) : null;
};

const text = (archive: ZipArchive, name: string): string | null =>
  archive.read(name)?.toString('utf8') ?? null;

async function open(path: string, limits: ZipLimits): Promise<ZipArchive> {
  return new ZipArchive(await readFile(path), limits);
}

// ---- XLSX ----

function xlsxSheets(archive: ZipArchive): { name: string; path: string }[] {
  const workbook = text(archive, 'xl/workbook.xml');
  const rels = text(archive, 'xl/_rels/workbook.xml.rels');
  if (!workbook || !rels)
    throw permanent('INVALID_FORMAT', 'the file is not an XLSX workbook (no xl/workbook.xml)');
  const targets = new Map<string, string>();
  for (const [tag] of rels.matchAll(/<Relationship\b[^>]*>/g)) {
    const id = attribute(tag, 'Id');
    const target = attribute(tag, 'Target');
    if (id && target) targets.set(id, target.startsWith('/') ? target.slice(1) : `xl/${target}`);
  }
  return [...workbook.matchAll(/<sheet\b[^>]*>/g)].map(([tag]) => ({
    name: attribute(tag, 'name') ?? 'Sheet',
    path: targets.get(attribute(tag, 'r:id') ?? '') ?? '',
  }));
}

function sharedStrings(archive: ZipArchive): string[] {
  const xml = text(archive, 'xl/sharedStrings.xml');
  if (!xml) return [];
  return [...xml.matchAll(/<si>([\s\S]*?)<\/si>/g)].map(([, si]) =>
    [...(si ?? '').matchAll(/<t\b[^>]*>([\s\S]*?)<\/t>/g)].map(([, t]) => decodeXml(t ?? '')).join(''),
  );
}

const BUILT_IN_DATE_FORMATS = new Set([14, 15, 16, 17, 18, 19, 20, 21, 22, 45, 46, 47]);

/** Which cell styles (index into cellXfs) format numbers as dates. */
function dateStyles(archive: ZipArchive): Set<number> {
  const xml = text(archive, 'xl/styles.xml');
  const dates = new Set<number>();
  if (!xml) return dates;
  const custom = new Set<number>();
  for (const [tag] of xml.matchAll(/<numFmt\b[^>]*>/g)) {
    const code = (attribute(tag, 'formatCode') ?? '').replace(/"[^"]*"|\[[^\]]*\]/g, '');
    if (/[dmyh]/i.test(code)) custom.add(Number(attribute(tag, 'numFmtId')));
  }
  const xfs = /<cellXfs\b[^>]*>([\s\S]*?)<\/cellXfs>/.exec(xml)?.[1] ?? '';
  [...xfs.matchAll(/<xf\b[^>]*>/g)].forEach(([tag], index) => {
    const id = Number(attribute(tag, 'numFmtId') ?? 0);
    if (BUILT_IN_DATE_FORMATS.has(id) || custom.has(id)) dates.add(index);
  });
  return dates;
}

function columnIndex(reference: string): number {
  let index = 0;
  for (const char of reference.replace(/\d+$/, '')) index = index * 26 + (char.charCodeAt(0) - 64);
  return index - 1;
}

/** Excel's serial day number (1900 system) as ISO 8601 UTC. */
export function excelSerialToIso(serial: number): string {
  return new Date(Math.round((serial - 25569) * 86_400_000)).toISOString();
}

function* xlsxRows(archive: ZipArchive, sheetPath: string): Generator<string[]> {
  const xml = text(archive, sheetPath);
  if (xml === null) throw permanent('INVALID_FORMAT', `the workbook has no ${sheetPath}`);
  const strings = sharedStrings(archive);
  const dates = dateStyles(archive);
  for (const [, body] of xml.matchAll(/<row\b[^>]*>([\s\S]*?)<\/row>/g)) {
    const row: string[] = [];
    let next = 0;
    for (const [, tagAttributes = '', content = ''] of (body ?? '').matchAll(
      /<c\b([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g,
    )) {
      const reference = attribute(tagAttributes, 'r');
      const index = reference ? columnIndex(reference) : next;
      if (index >= MAX_COLUMNS) {
        throw permanent('TOO_MANY_COLUMNS', `the sheet has more than ${MAX_COLUMNS} columns`);
      }
      next = index + 1;
      const type = attribute(tagAttributes, 't');
      const raw = /<v>([\s\S]*?)<\/v>/.exec(content)?.[1];
      let value = '';
      if (type === 's') value = strings[Number(raw)] ?? '';
      else if (type === 'inlineStr')
        value = [...content.matchAll(/<t\b[^>]*>([\s\S]*?)<\/t>/g)]
          .map(([, t]) => decodeXml(t ?? ''))
          .join('');
      else if (raw !== undefined) {
        value = decodeXml(raw);
        const style = Number(attribute(tagAttributes, 's') ?? -1);
        if (type !== 'str' && type !== 'b' && type !== 'e' && dates.has(style) && value !== '') {
          value = excelSerialToIso(Number(value));
        } else if (type === 'b') value = value === '1' ? 'true' : 'false';
      }
      while (row.length < index) row.push('');
      row[index] = value;
    }
    yield row;
  }
}

// ---- ODS ----

function odsTables(archive: ZipArchive): { name: string; body: string }[] {
  const xml = text(archive, 'content.xml');
  if (!xml) throw permanent('INVALID_FORMAT', 'the file is not an ODS workbook (no content.xml)');
  return [...xml.matchAll(/<table:table\b([^>]*)>([\s\S]*?)<\/table:table>/g)].map(
    ([, tag = '', body = '']) => ({
      name: attribute(tag, 'table:name') ?? 'Sheet',
      body,
    }),
  );
}

function* odsRows(body: string): Generator<string[]> {
  let pendingEmpty = 0;
  for (const [, rowTag = '', cells = ''] of body.matchAll(
    /<table:table-row\b([^>]*?)(?:\/>|>([\s\S]*?)<\/table:table-row>)/g,
  )) {
    const row: string[] = [];
    for (const [, cellTag = '', content = ''] of cells.matchAll(
      /<table:(?:covered-)?table-cell\b([^>]*?)(?:\/>|>([\s\S]*?)<\/table:(?:covered-)?table-cell>)/g,
    )) {
      const type = attribute(cellTag, 'office:value-type');
      let value =
        type === 'date'
          ? (attribute(cellTag, 'office:date-value') ?? '')
          : type === 'float' || type === 'percentage' || type === 'currency'
            ? (attribute(cellTag, 'office:value') ?? '')
            : type === 'boolean'
              ? (attribute(cellTag, 'office:boolean-value') ?? '')
              : [...content.matchAll(/<text:p\b[^>]*>([\s\S]*?)<\/text:p>/g)]
                  .map(([, p]) =>
                    decodeXml((p ?? '').replace(/<text:s\b[^>]*\/>/g, ' ').replace(/<[^>]+>/g, '')),
                  )
                  .join('\n');
      if (type === 'date' && /^\d{4}-\d{2}-\d{2}T/.test(value) && !/[Z+]/.test(value)) value = `${value}Z`;
      // Trailing empty cells are often "repeated 16,000 times": only repeat what has content.
      const repeat = Number(attribute(cellTag, 'table:number-columns-repeated') ?? 1);
      const times = value === '' ? Math.min(repeat, MAX_COLUMNS - row.length + 1) : repeat;
      if (row.length + times > MAX_COLUMNS && value !== '') {
        throw permanent('TOO_MANY_COLUMNS', `the sheet has more than ${MAX_COLUMNS} columns`);
      }
      for (let i = 0; i < times && row.length <= MAX_COLUMNS; i++) row.push(value);
    }
    while (row.length > 0 && row[row.length - 1] === '') row.pop();
    if (row.length === 0) {
      // Empty rows (often repeated a million times at the end) are kept only when more data follows.
      pendingEmpty += Math.min(Number(attribute(rowTag, 'table:number-rows-repeated') ?? 1), 1_000_000);
      continue;
    }
    for (; pendingEmpty > 0; pendingEmpty--) yield [''];
    const repeat = Math.min(Number(attribute(rowTag, 'table:number-rows-repeated') ?? 1), 1_000_000);
    for (let i = 0; i < repeat; i++) yield row;
  }
}

// ---- both ----

export async function workbookSheetNames(
  path: string,
  format: WorkbookFormat,
  limits: ZipLimits = DEFAULT_ZIP_LIMITS,
): Promise<string[]> {
  const archive = await open(path, limits);
  return format === 'xlsx'
    ? xlsxSheets(archive).map((sheet) => sheet.name)
    : odsTables(archive).map((t) => t.name);
}

export async function* workbookRows(
  path: string,
  format: WorkbookFormat,
  sheetIndex: number,
  limits: ZipLimits = DEFAULT_ZIP_LIMITS,
): AsyncGenerator<string[]> {
  const archive = await open(path, limits);
  if (format === 'xlsx') {
    const sheet = xlsxSheets(archive)[sheetIndex];
    if (!sheet) throw permanent('INVALID_FORMAT', `the workbook has no sheet ${sheetIndex + 1}`);
    yield* xlsxRows(archive, sheet.path);
  } else {
    const table = odsTables(archive)[sheetIndex];
    if (!table) throw permanent('INVALID_FORMAT', `the workbook has no sheet ${sheetIndex + 1}`);
    yield* odsRows(table.body);
  }
}
