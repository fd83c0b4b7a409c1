import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '../config/environment.ts';
import { backupDatabase, restoreDatabase } from '../postgres/backup.ts';
import { redactUrl } from '../postgres/database.ts';

// `chronomap backup` and `chronomap restore` (src/adapters/postgres/backup.ts does the work).

export async function runBackup(
  version: string,
  config: Config,
  databaseUrl: string,
  args: string[],
  say: (line: string) => void,
): Promise<number> {
  const { values } = parseArgs({ args, options: { out: { type: 'string' } }, strict: true });
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
  const outDir = path.resolve(values.out ?? `chronomap-backup-${stamp}`);
  const manifest = await backupDatabase({
    databaseUrl,
    dataDir: config.dataDir,
    outDir,
    version,
    redactedUrl: redactUrl(databaseUrl),
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
    options: { from: { type: 'string' }, replace: { type: 'boolean', default: false } },
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
  });
  say(
    `restored the backup of ${manifest.createdAt} (${manifest.events} events) into ${redactUrl(databaseUrl)}; ` +
      'run `chronomap migrate` if this version has newer migrations',
  );
  return 0;
}
