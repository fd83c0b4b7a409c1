import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createAdmin } from './application/accounts/create-admin.ts';
import { seedDemo } from './application/site/seed-demo.ts';
import {
  composeServices,
  DatabaseUnavailableError,
  openDatabase,
  resolveDatabaseUrl,
  VERSION,
} from './compose.ts';
import { DomainError } from './domain/errors.ts';
import { type Config, ConfigError, loadConfig, projectRoot } from './adapters/config/environment.ts';
import { startJobQueue } from './adapters/jobs/job-queue.ts';
import { ApiProcessesError, isApiWorker, startApiProcesses } from './adapters/cli/api-processes.ts';
import { runBackup, runRestore } from './adapters/cli/backup-commands.ts';
import { runStop } from './adapters/cli/stop-command.ts';
import { csvRows } from './adapters/files/local-source-files.ts';
import { clusterMetrics } from './adapters/metrics/cluster-metrics.ts';
import { startMetricsListener } from './adapters/metrics/http-metrics.ts';
import { createMetrics } from './adapters/metrics/registry.ts';
import { BackupError } from './adapters/postgres/backup.ts';
import { redactUrl } from './adapters/postgres/database.ts';
import { postgresEventStore } from './adapters/postgres/ingest/event-store.ts';
import { loadMigrations, MigrationError, migrate } from './adapters/postgres/migrator.ts';
import { postgresSessionStore } from './adapters/postgres/accounts/session-store.ts';
import { postgresUserStore } from './adapters/postgres/accounts/user-store.ts';
import { scryptPasswordHasher } from './adapters/security/scrypt-password-hasher.ts';

const USAGE = `chronomap ${VERSION}

Usage: chronomap <command> [options]

Commands:
  start [--processes N]              API and background workers (applies migrations first)
  api [--processes N]                HTTP API only
                                     --processes: HTTP processes sharing the port (default API_PROCESSES,
                                     else one per core, at most 4)
  worker                             background workers only
  migrate                            apply pending database migrations
  create-admin --email E --password P  create an administrator (or promote and reset an existing account)
  seed-demo [--file F]               load demo events (USGS earthquakes) into a public catalog "demo"
  backup [--out DIR] [--jobs N]      save the database and the uploaded files into a new folder
  restore --from DIR [--replace] [--jobs N]
                                     load a backup into an empty database (--replace: over existing data;
                                     --jobs: processes of pg_dump/pg_restore, default the cores, at most 4)
  stop [--force]                     stop the embedded PostgreSQL (refused while a service process uses it)
  help                               this text

Configuration comes from environment variables; see README.md#configuration.
Without DATABASE_URL an embedded PostgreSQL cluster is created under .data/postgres; it keeps
running when the service stops (the next start finds it ready) until \`chronomap stop\`.`;

const say = (line: string) => process.stdout.write(`${line}\n`);

async function main(argv: string[]): Promise<number> {
  const [command = 'help', ...rest] = argv;
  if (command === 'help' || command === '--help' || command === '-h') {
    say(USAGE);
    return 0;
  }
  const known = [
    'start',
    'api',
    'worker',
    'migrate',
    'create-admin',
    'seed-demo',
    'backup',
    'restore',
    'stop',
  ];
  if (!known.includes(command)) {
    process.stderr.write(`unknown command "${command}"\n\n${USAGE}\n`);
    return 2;
  }
  const config = loadConfig();
  // Before the database URL is resolved, which would start the embedded cluster.
  if (command === 'stop') return runStop(config, rest, say);
  const databaseUrl = await resolveDatabaseUrl(config, say);

  switch (command) {
    case 'migrate':
      await applyMigrations(config, databaseUrl);
      return 0;
    case 'create-admin':
      return runCreateAdmin(databaseUrl, rest);
    case 'seed-demo':
      return runSeedDemo(databaseUrl, rest);
    case 'backup':
      return runBackup(VERSION, config, databaseUrl, rest, say);
    case 'restore':
      return runRestore(config, databaseUrl, rest, say);
    default: {
      const processes = command === 'worker' ? 1 : parseProcesses(rest, config.apiProcesses);
      if (processes === null) return 2;
      return serve(config, databaseUrl, command as 'start' | 'api' | 'worker', processes);
    }
  }
}

/** `--processes N` of start and api; null (after saying why) when it is not a count. */
function parseProcesses(args: string[], fallback: number): number | null {
  const { values } = parseArgs({ args, options: { processes: { type: 'string' } }, strict: true });
  if (values.processes === undefined) return fallback;
  const count = Number(values.processes);
  if (!/^\d+$/.test(values.processes) || count < 1 || count > 64) {
    process.stderr.write(`--processes must be an integer from 1 to 64 (got "${values.processes}")\n`);
    return null;
  }
  return count;
}

async function applyMigrations(config: Config, databaseUrl: string): Promise<void> {
  await openDatabase(databaseUrl).then((pool) => pool.end());
  const applied = await migrate(databaseUrl, loadMigrations(), say, config.migrationLocks);
  // pg-boss installs or upgrades its own schema when it starts.
  const boss = await startJobQueue(databaseUrl, 'migrate', (error) =>
    process.stderr.write(`${error.message}\n`),
  );
  await boss.stop({ graceful: false });
  say(applied.length === 0 ? 'database is up to date' : `applied ${applied.length} migration(s)`);
}

/** On SIGTERM or SIGINT (or `shutdown(reason)`): finish running work, close, exit 0. */
function onShutdown(close: () => Promise<void>): (reason: string) => Promise<void> {
  let closing = false;
  const shutdown = async (reason: string) => {
    if (closing) return;
    closing = true;
    say(`${reason} received: finishing running work and closing`);
    await close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  return shutdown;
}

async function serve(
  config: Config,
  databaseUrl: string,
  command: 'start' | 'api' | 'worker',
  processes: number,
): Promise<number> {
  // A worker of several API processes is an `api` whatever the command: the primary ran the
  // migrations and runs the background workers.
  const mode = isApiWorker() ? 'api' : command;
  if (mode !== 'worker' && processes > 1 && !isApiWorker())
    return serveProcesses(config, databaseUrl, mode, processes);
  if (mode === 'start') await applyMigrations(config, databaseUrl);
  const services = await composeServices(config, databaseUrl, {
    http: mode !== 'worker',
    workers: mode !== 'api',
  });
  const metricsListener = isApiWorker()
    ? undefined
    : await serveMetrics(config, () => services.metrics.registry.metrics());
  const shutdown = onShutdown(async () => {
    await metricsListener?.close();
    await services.close();
  });

  if (services.http) {
    const address = await services.http.listen({ host: config.host, port: config.port });
    if (isApiWorker()) {
      // Without its primary no connection reaches this process any more.
      process.on('disconnect', () => void shutdown('primary gone'));
      return new Promise<number>(() => {}); // the primary says where it listens
    }
    say(`chronomap ${mode} listening on ${address} (database ${redactUrl(databaseUrl)})`);
    say(`  health: ${address}/api/health   API docs: ${address}/api/docs`);
  } else {
    say(`chronomap worker running (database ${redactUrl(databaseUrl)})`);
  }
  return new Promise<number>(() => {}); // runs until a signal
}

/**
 * Several HTTP processes on one port; with `start` this process runs the migrations first and the
 * background workers itself, once.
 */
async function serveProcesses(
  config: Config,
  databaseUrl: string,
  mode: 'start' | 'api',
  processes: number,
): Promise<number> {
  if (mode === 'start') await applyMigrations(config, databaseUrl);
  const workers =
    mode === 'start' ? await composeServices(config, databaseUrl, { http: false, workers: true }) : null;
  // Before the first fork: the sums include every worker from its start (cluster-metrics.ts).
  const metrics = clusterMetrics((workers?.metrics ?? createMetrics()).registry);
  const api = startApiProcesses({ processes, env: { DATABASE_URL: databaseUrl }, say });
  const metricsListener = await serveMetrics(config, () => metrics.text());
  onShutdown(async () => {
    await metricsListener?.close();
    await api.stop();
    await workers?.close();
  });
  const address = await api.ready.catch(async (error: unknown) => {
    await workers?.close();
    throw error;
  });
  say(
    `chronomap ${mode} listening on ${address} (${processes} processes, database ${redactUrl(databaseUrl)})`,
  );
  say(`  health: ${address}/api/health   API docs: ${address}/api/docs`);
  return new Promise<number>(() => {}); // runs until a signal
}

/** The METRICS_BIND listener of this process, when the operator asked for one. */
async function serveMetrics(config: Config, text: () => Promise<string>) {
  if (!config.metricsBind) return undefined;
  const listener = await startMetricsListener(config.metricsBind, text);
  say(`metrics: ${listener.address}/metrics`);
  return listener;
}

async function runCreateAdmin(databaseUrl: string, args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { email: { type: 'string' }, password: { type: 'string' } },
    strict: true,
  });
  const password = values.password ?? process.env.CHRONOMAP_ADMIN_PASSWORD;
  if (!values.email || !password) {
    process.stderr.write('create-admin needs --email and --password (or CHRONOMAP_ADMIN_PASSWORD)\n');
    return 2;
  }
  const pool = await openDatabase(databaseUrl);
  try {
    const user = await createAdmin(
      {
        users: postgresUserStore(pool),
        passwords: scryptPasswordHasher(),
        sessions: postgresSessionStore(pool),
      },
      { email: values.email, password },
    );
    say(`${user.created ? 'created' : 'updated'} administrator ${user.email} (id ${user.id})`);
    return 0;
  } finally {
    await pool.end();
  }
}

async function runSeedDemo(databaseUrl: string, args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { file: { type: 'string' } }, strict: true });
  const file = path.resolve(values.file ?? path.join(projectRoot, 'examples', 'usgs-earthquakes.csv'));
  if (!existsSync(file)) {
    process.stderr.write(`no such file: ${file}\n`);
    return 2;
  }
  const pool = await openDatabase(databaseUrl);
  try {
    // The ingestion pipeline's CSV reader (encoding, delimiter, quoting and size limits as for an import).
    const result = await seedDemo({ events: postgresEventStore(pool) }, csvRows(file));
    say(
      `demo data: read ${result.read} rows, stored ${result.inserted} new events` +
        `${result.invalid ? `, skipped ${result.invalid} invalid rows` : ''} (the public demo: catalog ${result.catalogId}, dataset ${result.datasetId})`,
    );
    return 0;
  } finally {
    await pool.end();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    // Expected failures get one clear line; only a bug prints a stack trace.
    if (
      error instanceof ConfigError ||
      error instanceof DatabaseUnavailableError ||
      error instanceof ApiProcessesError ||
      error instanceof BackupError ||
      error instanceof MigrationError
    ) {
      process.stderr.write(`chronomap: ${error.message}\n`);
    } else if (error instanceof DomainError) {
      process.stderr.write(`chronomap: ${error.message}\n`);
    } else if (error instanceof Error && /initdb|pg_ctl|PostgreSQL server binaries/.test(error.message)) {
      process.stderr.write(`chronomap: embedded database: ${error.message}\n`);
    } else {
      process.stderr.write(`chronomap: unexpected error\n${(error as Error)?.stack ?? String(error)}\n`);
    }
    process.exit(1);
  },
);
