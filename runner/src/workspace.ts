// A per-run directory under SCRAPER_DATA_DIR holding the code, the output and the env file.
// The caller removes it in a finally block, whatever happened to the run.
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { badRequest } from './errors.ts';

export interface Workspace {
  root: string;
  codeDir: string;
  outputDir: string;
  envFile: string;
  /** Where podman writes the container's id once it is created. */
  cidFile: string;
}

export async function createWorkspace(dataDir: string, runId: string): Promise<Workspace> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const root = await mkdtemp(join(dataDir, `run-${runId}-`));
  const workspace = {
    root,
    codeDir: join(root, 'code'),
    outputDir: join(root, 'output'),
    envFile: join(root, 'env'),
    cidFile: join(root, 'cid'),
  };
  await mkdir(workspace.codeDir, { mode: 0o755 });
  await mkdir(workspace.outputDir, { mode: 0o755 });
  return workspace;
}

export async function removeWorkspace(workspace: Workspace): Promise<void> {
  await rm(workspace.root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}

/** The container's user is an unprivileged, remapped uid: code must be world-readable. */
export async function makeReadable(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isSymbolicLink()) continue;
    await chmod(join(entry.parentPath, entry.name), entry.isDirectory() ? 0o755 : 0o644);
  }
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export function checkEnv(env: Record<string, string>): void {
  for (const [name, value] of Object.entries(env)) {
    if (!ENV_NAME.test(name))
      throw badRequest(
        'INVALID_ENV',
        `env name '${name}' must be letters, digits and _ and not start with a digit`,
      );
    if (name.startsWith('CHRONOMAP_'))
      throw badRequest('INVALID_ENV', `env name '${name}' is reserved for the runner`);
    // podman's env file has one KEY=VALUE per line and no quoting.
    if (/[\n\r\0]/.test(value))
      throw badRequest('INVALID_ENV', `env value of '${name}' must not contain a line break or NUL`);
  }
}

/** Variables go through a 0600 file rather than argv, where any host user could read them. */
export async function writeEnvFile(path: string, env: Record<string, string>): Promise<void> {
  const lines = Object.entries(env).map(([name, value]) => `${name}=${value}\n`);
  await writeFile(path, lines.join(''), { mode: 0o600 });
}
