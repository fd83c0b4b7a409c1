// chronomap-runner: validates the configuration, checks that podman can apply the sandbox,
// serves the API, and on SIGTERM/SIGINT stops every container before exiting.
import { ConfigError, loadConfig } from './config.ts';
import { buildApp } from './http/app.ts';
import { RunManager } from './run-manager.ts';
import { sweepOrphans } from './sandbox/orphans.ts';
import { engineNotes, engineProblems, sandboxSubnets } from './sandbox/preflight.ts';
import { startStreamCheck, type StreamCheckProcess } from './sandbox/stream-check/launch.ts';

function die(message: string): never {
  process.stderr.write(`chronomap-runner: ${message}\n`);
  process.exit(1);
}

export async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) die(err.message);
    throw err;
  }
  const problems = await engineProblems(config);
  if (problems.length > 0) die(`cannot sandbox scrapers on this host: ${problems.join('; ')}`);

  const runs = new RunManager(config);
  const app = buildApp(runs, { logger: true });
  for (const note of await engineNotes(config))
    app.log.warn(`sandbox limit not applied on this host: ${note}`);
  const swept = await sweepOrphans(config.podmanPath, config.dataDir, config.network);
  if (swept.containers.length + swept.workspaces.length + swept.addresses.length > 0)
    app.log.warn(
      swept,
      'removed the containers, workspaces and address reservations left by a runner or podman that ended without cleaning up',
    );
  if (config.allowLoopbackGit) {
    app.log.warn('SCRAPER_ALLOW_LOOPBACK_GIT is on: code_url may point at this host (meant for tests only)');
  }
  let stopping = false;
  // The stream check the firewall redirects the sandbox's TCP 443/80/53 to (as root: the host
  // firewall governs only rootful podman's networks). Restarted if it dies; meanwhile those
  // connections are refused.
  let streamCheck: StreamCheckProcess | undefined;
  const startCheck = async (): Promise<void> => {
    streamCheck = await startStreamCheck(config.streamCheckPort, await sandboxSubnets(config), {
      onRefuse: (line) => app.log.info(JSON.parse(line) as object, 'stream check refused a connection'),
      onExit: (code) => {
        if (stopping) return;
        app.log.error({ code }, 'the stream check exited; restarting it');
        setTimeout(() => void startCheck().catch((err: Error) => app.log.error(err.message)), 1000);
      },
    });
  };
  if (process.getuid?.() === 0) {
    try {
      await startCheck();
    } catch (err) {
      die(`cannot start the stream check on port ${config.streamCheckPort}: ${(err as Error).message}`);
    }
  }
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal, active_runs: runs.activeRuns }, 'stopping all runs before exit');
    await streamCheck?.stop();
    await runs.shutdown();
    await app.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  await app.listen({ port: config.port, host: config.host });
}
