// Why ingestion has its own CSV parser (docs/decisions.md): reads the same file with it and with
// fast-csv (which `seed-demo` uses), alternated, and prints rows per second for each.
//   npx node bench/ingest/csv-parsers.ts [rows, default 200000]
// The file is examples/usgs-earthquakes.csv repeated to the row count, written to the temp dir.
import { createReadStream, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'fast-csv';
import { CsvParser } from '@chronomap/csv';
import { projectRoot } from '../../src/adapters/config/environment.ts';

const wanted = Number(process.argv[2] ?? 200_000);
const sample = readFileSync(path.join(projectRoot, 'examples', 'usgs-earthquakes.csv'), 'utf8');
const [header, ...lines] = sample.trimEnd().split('\n');
const file = path.join(os.tmpdir(), `chronomap-csv-bench-${process.pid}.csv`);
writeFileSync(file, `${header}\n${`${lines.join('\n')}\n`.repeat(Math.ceil(wanted / lines.length))}`);

async function ownParser(): Promise<number> {
  const parser = new CsvParser(',');
  let rows = 0;
  for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 16 }))
    rows += parser.push(chunk as string).length;
  return rows + parser.end().length;
}

async function fastCsv(): Promise<number> {
  let rows = 0;
  for await (const _row of createReadStream(file).pipe(parse({ headers: false }))) rows++;
  return rows;
}

for (let round = 1; round <= 2; round++) {
  for (const [name, read] of [
    ['own CsvParser', ownParser],
    ['fast-csv', fastCsv],
  ] as const) {
    const started = performance.now();
    const rows = await read();
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(
      `round ${round}  ${name.padEnd(14)} ${rows} rows  ${seconds.toFixed(2)} s  ${Math.round(rows / seconds)} rows/s\n`,
    );
  }
}

rmSync(file);
