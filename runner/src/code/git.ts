// Shallow clone of a scraper repository, with the limits the spec asks for: https only, one
// branch at depth 1, no submodules, no redirects, the host pinned to an address that passed
// the SSRF guard, a size cap enforced while git writes, and a timeout.
import { execFile, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { RunnerError, badRequest } from '../errors.ts';
import { treeUsage } from '../fs-size.ts';
import { killGroup } from '../process-group.ts';
import type { ResolvedHost } from './address-guard.ts';

export interface CodeUrl {
  url: URL;
  branch: string | undefined;
}

const BRANCH = /^[A-Za-z0-9._/][A-Za-z0-9._/+-]{0,254}$/;

export function parseCodeUrl(raw: string): CodeUrl {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest('INVALID_CODE_URL', 'code_url is not a valid URL');
  }
  if (url.protocol !== 'https:')
    throw badRequest('INVALID_CODE_URL', `code_url must use https://, not ${url.protocol}//`);
  let branch: string | undefined;
  if (url.hash.length > 1) {
    branch = decodeURIComponent(url.hash.slice(1));
    // A branch beginning with '-' would be read by git as an option.
    if (!BRANCH.test(branch) || branch.split('/').includes('..'))
      throw badRequest('INVALID_CODE_URL', `branch '${branch}' is not a valid branch name`);
  }
  url.hash = '';
  return { url, branch };
}

/** The URL as it may appear in messages: without any credentials. */
function publicUrl(url: URL): string {
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  return copy.href;
}

export interface CloneOptions {
  source: CodeUrl;
  /** The git host's address, already through the SSRF guard (see resolvePublicHost). */
  resolved: ResolvedHost;
  dest: string;
  home: string;
  maxBytes: number;
  timeoutMs: number;
  signal: AbortSignal;
}

/**
 * Clones the repository into `dest` (without its .git) and answers the commit it checked out (hex),
 * which the run reports (the events' provenance names it); null if git could not say.
 */
export async function cloneRepository(options: CloneOptions): Promise<string | null> {
  const { url, branch } = options.source;
  const { host, address } = options.resolved;
  const port = url.port === '' ? 443 : Number(url.port);
  const pinned = address.includes(':') ? `[${address}]` : address;
  const args = [
    '-c',
    'http.followRedirects=false',
    '-c',
    `http.curloptResolve=${host}:${port}:${pinned}`,
    '-c',
    'protocol.allow=never',
    '-c',
    'protocol.https.allow=always',
    '-c',
    'core.hooksPath=/dev/null',
    '-c',
    'core.symlinks=false',
    '-c',
    'submodule.recurse=false',
    'clone',
    '--quiet',
    '--depth',
    '1',
    '--single-branch',
    '--no-tags',
    '--no-recurse-submodules',
    ...(branch === undefined ? [] : ['--branch', branch]),
    '--',
    url.href,
    options.dest,
  ];
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: options.home,
    LANG: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
  };
  // An operator (or the test suite) may point git at an extra CA bundle.
  if (process.env.GIT_SSL_CAINFO) env.GIT_SSL_CAINFO = process.env.GIT_SSL_CAINFO;

  const child = spawn('git', args, { env, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    if (stderr.length < 8192) stderr += chunk;
  });
  let failure: RunnerError | undefined;
  const fail = (error: RunnerError) => {
    failure ??= error;
    killGroup(child);
  };
  const mb = Math.round(options.maxBytes / 1024 / 1024);
  const tooLarge = () =>
    new RunnerError(422, 'REPO_TOO_LARGE', `repository is larger than SCRAPER_MAX_REPO_SIZE_MB (${mb} MB)`);
  // Symlinks in the repository are counted, never followed (fs-size.ts).
  const overCap = async () =>
    (await treeUsage(options.dest, { maxBytes: options.maxBytes })).bytes > options.maxBytes;
  let checking = false;
  const watcher = setInterval(async () => {
    if (checking) return;
    checking = true;
    try {
      if (await overCap()) fail(tooLarge());
    } finally {
      checking = false;
    }
  }, 100);
  const timer = setTimeout(
    () =>
      fail(
        new RunnerError(422, 'CLONE_TIMEOUT', `clone did not finish within ${options.timeoutMs / 1000} s`),
      ),
    options.timeoutMs,
  );
  const onAbort = () => fail(new RunnerError(422, 'STOPPED', 'run stopped while cloning'));
  options.signal.addEventListener('abort', onAbort);
  if (options.signal.aborted) onAbort();
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    });
    if (failure) throw failure;
    if (code !== 0) {
      const reason = stderr.trim().split('\n').slice(-3).join(' ').replaceAll(url.href, publicUrl(url));
      throw new RunnerError(422, 'CLONE_FAILED', `git clone of ${publicUrl(url)} failed`, reason);
    }
    if (await overCap()) throw tooLarge();
    const commit = await headCommit(options.dest, env);
    // The scraper gets the files, not the history.
    await rm(join(options.dest, '.git'), { recursive: true, force: true });
    return commit;
  } finally {
    clearInterval(watcher);
    clearTimeout(timer);
    options.signal.removeEventListener('abort', onAbort);
    killGroup(child);
  }
}

const COMMIT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** The commit checked out in a clone (`git rev-parse HEAD`), or null when git does not answer one. */
export function headCommit(dir: string, env: Record<string, string>): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(
      'git',
      ['-C', dir, 'rev-parse', '--verify', 'HEAD'],
      { env, timeout: 10_000, maxBuffer: 4096 },
      (error, stdout) => {
        const commit = String(stdout).trim();
        resolve(!error && COMMIT.test(commit) ? commit : null);
      },
    );
  });
}
