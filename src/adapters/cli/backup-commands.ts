import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '../config/environment.ts';
import { localExportFileStore } from '../files/export-file-store.ts';
import { BackupError, backupDatabase, defaultJobs, restoreDatabase } from '../postgres/backup.ts';
import { redactUrl } from '../postgres/database.ts';

// `chronomap backup` and `chronomap restore` (src/adapters/postgres/backup.ts does the work).
// Both take `--jobs N`, the processes pg_dump and pg_restore run.

export async function runBackup(
  version: string,
  config: Config,
  databaseUrl: string,
  args: string[],
  say: (line: string) => void,
): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { out: { type: 'string' }, jobs: { type: 'string' } },
    strict: true,
  });
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
  const outDir = path.resolve(values.out ?? `chronomap-backup-${stamp}`);
  const manifest = await backupDatabase({
    databaseUrl,
    dataDir: config.dataDir,
    outDir,
    version,
    redactedUrl: redactUrl(databaseUrl),
    jobs: parseJobs(values.jobs),
  });
  say(
    `backup of ${manifest.database} written to ${outDir}: ${manifest.events} events, ` +
      `${manifest.migrations} migrations${manifest.files ? ', uploaded files' : ''}`,
  );
  return 0;
}

export async function runRestore(
  config: Config,
  databaseUrl: string,
  args: string[],
  say: (line: string) => void,
): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      from: { type: 'string' },
      replace: { type: 'boolean', default: false },
      jobs: { type: 'string' },
    },
    strict: true,
  });
  if (!values.from) {
    process.stderr.write('restore needs --from DIR (a folder written by `chronomap backup`)\n');
    return 2;
  }
  const manifest = await restoreDatabase({
    databaseUrl,
    dataDir: config.dataDir,
    fromDir: path.resolve(values.from),
    replace: values.replace,
    jobs: parseJobs(values.jobs),
  });
  // The restored data versions may equal versions the kept exports were written at (docs/api-v1.md, "Exports").
  await localExportFileStore(config.exportCache).clear();
  say(
    `restored the backup of ${manifest.createdAt} (${manifest.events} events) into ${redactUrl(databaseUrl)}; ` +
      'run `chronomap migrate` if this version has newer migrations',
  );
  return 0;
}

/** `--jobs N`: how many processes pg_dump and pg_restore run (1 to 32; the cores, at most 4, by default). */
function parseJobs(given: string | undefined): number {
  if (given === undefined) return defaultJobs();
  const jobs = Number(given);
  if (!/^\d+$/.test(given) || jobs < 1 || jobs > 32)
    throw new BackupError(`--jobs must be an integer from 1 to 32 (got "${given}")`);
  return jobs;
}
