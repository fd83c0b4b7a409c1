// The workbook reader against the hand-written one it replaced (docs/decisions.md, "Libraries, why
// each"): both read the same generated XLSX and ODS, each run in a child process of its own so that
// peak memory is its own, alternated. The old reader is taken from git (`--base`, default the commit
// before the change) into a temporary directory, its imports pointed at this tree's files.
// Run: npx node bench/ingest/workbook-readers.ts [--rows N] [--rounds N] [--base COMMIT] [--formats xlsx,ods]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { projectRoot } from '../../src/adapters/config/environment.ts';
import { ods, type Sheet, xlsx } from '../../test/fixtures/ingest/workbooks.ts';

type Reader = {
  workbookSheetNames(file: string, format: 'xlsx' | 'ods'): Promise<string[]>;
  workbookRows(file: string, format: 'xlsx' | 'ods', sheet: number): AsyncIterable<string[]>;
};

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '2' },
    base: { type: 'string', default: '4f5892b' },
    formats: { type: 'string', default: 'xlsx,ods' },
    child: { type: 'string' }, // internal: "<reader module> <format> <file>"
  },
  allowPositionals: true,
});

if (values.child) {
  // One measurement: sheet names, then every row; prints JSON.
  const [module = '', format = 'xlsx', file = ''] = values.child.split(' ');
  const reader = (await import(module)) as Reader;
  let peak = process.memoryUsage().rss;
  const namesStarted = performance.now();
  await reader.workbookSheetNames(file, format as 'xlsx' | 'ods');
  const namesMs = performance.now() - namesStarted;
  const started = performance.now();
  let rows = 0;
  for await (const _row of reader.workbookRows(file, format as 'xlsx' | 'ods', 0)) {
    if (++rows % 5000 === 0) peak = Math.max(peak, process.memoryUsage().rss);
  }
  process.stdout.write(JSON.stringify({ rows, namesMs, rowsMs: performance.now() - started, peak }));
  process.exit(0);
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'chronomap-workbook-bench-'));
const here = (file: string) => pathToFileURL(path.join(projectRoot, file)).href;
const old = (file: string) =>
  execFileSync('git', ['show', `${values.base}:src/adapters/files/${file}`], {
    cwd: projectRoot,
    encoding: 'utf8',
  })
    .replace("'../../domain/ingest/failures.ts'", `'${here('src/domain/ingest/failures.ts')}'`)
    .replace("'./limits.ts'", `'${here('src/adapters/files/limits.ts')}'`);
writeFileSync(path.join(dir, 'zip-reader.ts'), old('zip-reader.ts'));
writeFileSync(path.join(dir, 'workbook-reader.ts'), old('workbook-reader.ts'));

const sheet: Sheet = { name: 'S', rows: [['time', 'lat', 'lon', 'title', 'place']] };
for (let i = 0; i < Number(values.rows); i++) {
  sheet.rows.push([{ date: 46108 + i / 1000 }, 52.5, 13.4, `event number ${i}`, 'Köln <centre>']);
}
const files = { xlsx: path.join(dir, 'book.xlsx'), ods: path.join(dir, 'book.ods') };
writeFileSync(files.xlsx, xlsx([sheet]));
writeFileSync(files.ods, ods([sheet]));
sheet.rows.length = 0;

const readers = {
  [`hand-written (${values.base})`]: pathToFileURL(path.join(dir, 'workbook-reader.ts')).href,
  'yauzl + saxes': here('src/adapters/files/workbook-reader.ts'),
};
process.stdout.write(`${values.rows} rows, 5 columns; sheet names, then every row; peak RSS of the child\n`);
for (let round = 1; round <= Number(values.rounds); round++) {
  for (const format of values.formats.split(',') as ('xlsx' | 'ods')[]) {
    for (const [name, module] of Object.entries(readers)) {
      const out = execFileSync(
        process.execPath,
        [import.meta.filename, '--child', `${module} ${format} ${files[format]}`],
        { encoding: 'utf8', maxBuffer: 1024 * 1024 },
      );
      const result = JSON.parse(out) as { rows: number; namesMs: number; rowsMs: number; peak: number };
      process.stdout.write(
        `round ${round}  ${format.padEnd(4)}  ${name.padEnd(26)}  names ${result.namesMs.toFixed(0).padStart(6)} ms` +
          `  ${result.rows} rows ${result.rowsMs.toFixed(0).padStart(6)} ms  peak ${(result.peak / 1e6).toFixed(0)} MB\n`,
      );
    }
  }
}
rmSync(dir, { recursive: true, force: true });
