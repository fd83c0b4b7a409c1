import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '../config/environment.ts';
import { stopEmbeddedCluster } from '../postgres/embedded-cluster.ts';

// `chronomap stop`: the embedded PostgreSQL cluster keeps running after the service stops (the next
// start finds it ready); this stops it. Refused while a service process still uses it (exit 1),
// unless --force. Nothing to do with DATABASE_URL set: that server is not this program's to stop.

export async function runStop(config: Config, args: string[], say: (line: string) => void): Promise<number> {
  const { values } = parseArgs({ args, options: { force: { type: 'boolean' } }, strict: true });
  if (config.databaseUrl) {
    process.stderr.write('chronomap stop stops the embedded PostgreSQL only; DATABASE_URL is set\n');
    return 2;
  }
  const dataDir = path.join(config.dataDir, 'postgres');
  const result = await stopEmbeddedCluster({ dataDir, force: values.force ?? false });
  if (result.outcome === 'in-use') {
    process.stderr.write(
      `embedded PostgreSQL in ${dataDir} is still used by running chronomap processes: ` +
        `${result.users.join(', ')}; stop them first (or chronomap stop --force)\n`,
    );
    return 1;
  }
  say(
    result.outcome === 'stopped'
      ? `embedded PostgreSQL in ${dataDir} stopped`
      : `embedded PostgreSQL in ${dataDir} is not running`,
  );
  return 0;
}
