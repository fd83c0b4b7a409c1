// Where a fresh export's time goes (issue 37 §3), outside HTTP: the exporter alone (PostgreSQL
// building the text on two connections, the driver, Node's strings), the same with every piece
// written to a file (the kept copy) and committed (fsync), and deflate of the resulting file alone at
// level 1 (stream path, as export-compression.ts runs it). Prints seconds per step and format, and
// the process's peak RSS growth during its first and second export of each format.
//
//   BENCH_DATABASE_URL=postgres://.../x_bench node bench/export/profile.ts [--formats geojson,csv]

import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { createGzip } from 'node:zlib';
import { createDatabasePool } from '../../src/adapters/postgres/database.ts';
import { postgresEventExporter } from '../../src/adapters/postgres/read/export.ts';
import { parseEventFilter } from '../../src/domain/read/read-query.ts';
import { parseEventSort } from '../../src/domain/read/sort.ts';
import type { ExportFormat } from '../../src/ports/read/event-exporter.ts';
import { benchDatabaseUrl } from '../read-api/bench-database.ts';

const { values: options } = parseArgs({ options: { formats: { type: 'string', default: 'geojson,csv' } } });

async function main(): Promise<void> {
  const pool = await createDatabasePool(await benchDatabaseUrl(), { maximumPoolSize: 6 });
  const exporter = postgresEventExporter(pool);
  const directory = mkdtempSync(path.join(os.tmpdir(), 'chronomap-export-profile-'));
  console.log(
    `load average ${os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')}`,
  );
  try {
    for (const format of (options.formats ?? '').split(',') as ExportFormat[]) {
      const run = async (file: string | null) => {
        const started = performance.now();
        const rssBefore = process.memoryUsage().rss;
        let rssPeak = rssBefore;
        const text = await exporter.exportEvents(null, parseEventFilter({}), parseEventSort('id'), format);
        const handle = file ? await open(file, 'w') : null;
        let bytes = 0;
        for await (const batch of text.batches) {
          bytes += batch.length;
          if (handle) await handle.write(batch, null, 'utf8');
          rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
        }
        const read = (performance.now() - started) / 1000;
        if (handle) {
          await handle.sync();
          await handle.close();
        }
        const growth = (rssPeak - rssBefore) / 1e6;
        return { read, total: (performance.now() - started) / 1000, bytes, growth };
      };
      const alone = await run(null);
      const file = path.join(directory, `export.${format}`);
      const written = await run(file);
      const deflateStarted = performance.now();
      await pipeline(createReadStream(file), createGzip({ level: 1 }), createWriteStream(`${file}.gz`));
      const deflate = (performance.now() - deflateStarted) / 1000;
      const megabytes = statSync(file).size / 1e6;
      console.log(
        `${format}: ${megabytes.toFixed(0)} MB; exporter alone ${alone.read.toFixed(2)} s; ` +
          `with the file write ${written.read.toFixed(2)} s, +fsync ${written.total.toFixed(2)} s; ` +
          `deflate level 1 of the file ${deflate.toFixed(2)} s (${(megabytes / deflate).toFixed(0)} MB/s); ` +
          `RSS growth, first export ${alone.growth.toFixed(1)} MB, second ${written.growth.toFixed(1)} MB`,
      );
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
    await pool.end();
  }
}

await main();
