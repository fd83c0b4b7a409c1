// Worker memory of an import of large cells (issue 30 §7: the worker reached 1,266 MB on a 72 MB
// file). Generates a CSV of large cells, then runs analyze-duplicates, detect-schema and
// create-events on it (the real CSV reader, localSourceFiles) in a fresh process per variant, and
// prints each process's peak RSS: the baseline, batches bounded by rows only (batchBytes
// unbounded: the behaviour before), next to batches bounded by BATCH_MAX_BYTES too. No database:
// the store serialises each batch once (JSON, as a copy on its way to the driver) and drops it,
// so the figures are the stage's own memory, not PostgreSQL's.
//   npx node bench/ingest/large-cells.ts [file MB, default 72] [cell characters, default 60000]
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { localSourceFiles } from '../../src/adapters/files/local-source-files.ts';
import { BATCH_MAX_BYTES } from '../../src/application/ingest/stages/create-events.ts';
import { runCreateEvents } from '../../test/helpers/create-events-run.ts';

const BATCH_ROWS = 20_000; // INGEST_BATCH_SIZE's default

async function child(dir: string, batchBytes: number): Promise<void> {
  let stored = 0;
  let before = 0;
  let peak = 0;
  let sampler: NodeJS.Timeout | undefined;
  const started = performance.now();
  await runCreateEvents(
    localSourceFiles(dir),
    'cells.csv',
    { batchSize: BATCH_ROWS, batchBytes },
    (batch) => {
      // A copy of the batch as it would go to the driver, dropped at once.
      Buffer.from(JSON.stringify(batch.events));
      stored += batch.events.length;
    },
    () => {
      // RSS before create-events, and its peak during the stage (sampled; maxRSS also holds the earlier stages').
      before = process.memoryUsage().rss;
      peak = before;
      sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss);
      }, 10);
    },
  );
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  process.stdout.write(
    JSON.stringify({
      rows: stored,
      seconds: (performance.now() - started) / 1000,
      maxRssMb: process.resourceUsage().maxRSS / 1024,
      growthMb: (peak - before) / 1024 / 1024,
    }),
  );
}

async function writeFile(file: string, megabytes: number, cell: number): Promise<number> {
  const out = createWriteStream(file);
  out.write('id,time,latitude,longitude,text\n');
  let bytes = 0;
  let rows = 0;
  while (bytes < megabytes * 1024 * 1024) {
    rows += 1;
    const line = `${rows},2026-01-01T00:00:00Z,52.5,13.4,${'x'.repeat(cell - 8)}${String(rows).padStart(8, '0')}\n`;
    bytes += line.length;
    if (!out.write(line)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve) => out.end(() => resolve()));
  return rows;
}

if (process.argv[2] === '--child') {
  await child(process.argv[3] ?? '', Number(process.argv[4]));
} else {
  const megabytes = Number(process.argv[2] ?? 72);
  const cell = Number(process.argv[3] ?? 60_000);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'chronomap-large-cells-'));
  try {
    const rows = await writeFile(path.join(dir, 'cells.csv'), megabytes, cell);
    process.stdout.write(
      `file: ${megabytes} MB, ${rows} rows of ${cell}-character cells; batches of ${BATCH_ROWS} rows\n`,
    );
    for (const [name, bytes] of [
      ['baseline: rows only (before)', Number.POSITIVE_INFINITY],
      [`rows and ${BATCH_MAX_BYTES / 1024 / 1024} MB (now)`, BATCH_MAX_BYTES],
    ] as const) {
      const run = spawnSync(
        process.execPath,
        [fileURLToPath(import.meta.url), '--child', dir, String(bytes)],
        {
          encoding: 'utf8',
          maxBuffer: 1024 * 1024,
        },
      );
      if (run.status !== 0) throw new Error(`${name}: ${run.stderr}`);
      const result = JSON.parse(run.stdout) as {
        rows: number;
        seconds: number;
        maxRssMb: number;
        growthMb: number;
      };
      process.stdout.write(
        `${name.padEnd(30)} peak RSS ${result.maxRssMb.toFixed(0).padStart(5)} MB  ` +
          `growth during create-events ${result.growthMb.toFixed(0).padStart(5)} MB  ` +
          `${result.seconds.toFixed(2)} s  ${result.rows} rows\n`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
