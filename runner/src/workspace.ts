// A per-run directory under SCRAPER_DATA_DIR holding the code, the output, the scraper's /tmp
// and the env file. The caller removes it in a finally block, whatever happened to the run; its
// name carries the owning process (owner.ts), so a runner restarted after a crash removes the
// workspaces of runs that died with their runner.
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { badRequest } from './errors.ts';
import { treeUsage } from './fs-size.ts';
import { OWNER, ownerAlive } from './owner.ts';
import { type TmpfsCaps, mountCapped, mountPoints, unmountCapped } from './sandbox/capped-mounts.ts';

export interface Workspace {
  root: string;
  codeDir: string;
  outputDir: string;
  /** The scraper's /tmp. */
  tmpDir: string;
  envFile: string;
  /** Where podman writes the container's id once it is created. */
  cidFile: string;
}

/** Size and inode caps of the two writable places; undefined: plain directories (not root). */
export interface WorkspaceCaps {
  output: TmpfsCaps;
  tmp: TmpfsCaps;
}

const PREFIX = 'run-';

export async function createWorkspace(
  dataDir: string,
  runId: string,
  caps: WorkspaceCaps | undefined,
): Promise<Workspace> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const root = await mkdtemp(join(dataDir, `${PREFIX}${OWNER}-${runId}-`));
  const workspace = {
    root,
    codeDir: join(root, 'code'),
    outputDir: join(root, 'output'),
    tmpDir: join(root, 'tmp'),
    envFile: join(root, 'env'),
    cidFile: join(root, 'cid'),
  };
  try {
    await mkdir(workspace.codeDir, { mode: 0o755 });
    await mkdir(workspace.outputDir, { mode: 0o755 });
    await mkdir(workspace.tmpDir, { mode: 0o1777 });
    await chmod(workspace.tmpDir, 0o1777); // mkdir's mode is filtered by the umask
    if (caps) {
      await mountCapped(workspace.outputDir, caps.output);
      await mountCapped(workspace.tmpDir, { ...caps.tmp, mode: 0o1777 });
    }
  } catch (err) {
    await removeWorkspace(workspace);
    throw err;
  }
  return workspace;
}

export async function removeWorkspace(workspace: Pick<Workspace, 'root'>): Promise<void> {
  for (const point of await mountPoints()) {
    if (point.startsWith(`${workspace.root}/`)) await unmountCapped(point);
  }
  await rm(workspace.root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}

/**
 * Removes the workspaces (and their mounts) of runner processes that are gone: a runner killed
 * mid-run could not clean up after itself. Returns the names removed.
 */
export async function sweepWorkspaces(dataDir: string): Promise<string[]> {
  const names = await readdir(dataDir).catch(() => [] as string[]);
  const removed: string[] = [];
  for (const name of names) {
    const owner = /^run-(\d+\.\d+)-/.exec(name)?.[1];
    if (owner === undefined || ownerAlive(owner)) continue;
    await removeWorkspace({ root: join(dataDir, name) });
    removed.push(name);
  }
  return removed;
}

/**
 * The container's user is an unprivileged, remapped uid: code must be world-readable. The walk
 * never follows a link (a cloned repository may hold one to `/`: chmod through it would change
 * host files as root).
 */
export async function makeReadable(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  await treeUsage(dir, { visit: (path, isDirectory) => chmod(path, isDirectory ? 0o755 : 0o644) });
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/**
 * podman reads the env file line by line with a 64 KiB line buffer and fails the whole run past
 * it (it was a 500 SANDBOX_ERROR); the kernel also caps one env string at 128 KiB at exec.
 */
export const MAX_ENV_VALUE_BYTES = 32 * 1024;
export const MAX_ENV_TOTAL_BYTES = 256 * 1024;

export function checkEnv(env: Record<string, string>): void {
  let total = 0;
  for (const [name, value] of Object.entries(env)) {
    const bytes = Buffer.byteLength(value);
    total += bytes + name.length + 2;
    if (bytes > MAX_ENV_VALUE_BYTES)
      throw badRequest(
        'INVALID_ENV',
        `env value of '${name}' is ${bytes} bytes, more than ${MAX_ENV_VALUE_BYTES}`,
      );
    if (total > MAX_ENV_TOTAL_BYTES)
      throw badRequest('INVALID_ENV', `env is larger than ${MAX_ENV_TOTAL_BYTES} bytes in all`);
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
