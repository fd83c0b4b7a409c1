import { execFile } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { BlockList, isIPv6 } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ManifestUnreadableError } from '../../domain/scrapers/errors.ts';
import { MANIFEST_FILE } from '../../domain/scrapers/repos.ts';
import type { GitManifestReader } from './yaml-manifest-source.ts';
import { isForbiddenAddress } from '../security/forbidden-addresses.ts';

// Reads `scrapers.yml` of a git repo on the main application's side, with the runner's outbound
// rules: https only, the host must resolve to public addresses (pinned for git so DNS cannot
// change its answer in between), no redirects. Only the manifest's blob is fetched: a shallow,
// blob-less clone without checkout, then `git show`. Loopback is allowed only with the test flag.

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

export function isPublicAddress(address: string): boolean {
  return !isForbiddenAddress(address);
}

type GitReaderOptions = { allowLoopback?: boolean; timeoutMs?: number; maxManifestBytes?: number };

export function gitManifestReader(options: GitReaderOptions = {}): GitManifestReader {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const maxBytes = options.maxManifestBytes ?? 1024 * 1024;
  return async (gitUrl, branch) => {
    const url = new URL(gitUrl);
    if (url.protocol !== 'https:')
      throw new ManifestUnreadableError('git repos are cloned over https:// only');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = url.port || '443';
    let addresses: { address: string }[];
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch {
      throw new ManifestUnreadableError(`git host ${host} does not resolve`);
    }
    const allowed = (address: string) =>
      isPublicAddress(address) ||
      (options.allowLoopback === true && LOOPBACK.check(address, isIPv6(address) ? 'ipv6' : 'ipv4'));
    const pinned = addresses[0]?.address;
    if (!pinned || !addresses.every(({ address }) => allowed(address))) {
      throw new ManifestUnreadableError(`git host ${host} resolves to a non-public address; refused`);
    }
    const dir = await mkdtemp(path.join(tmpdir(), 'chronomap-manifest-'));
    try {
      const resolveTo = isIPv6(pinned) ? `[${pinned}]` : pinned;
      const config = [
        '-c',
        'protocol.allow=never',
        '-c',
        'protocol.https.allow=always',
        '-c',
        'http.followRedirects=false',
        '-c',
        `http.curloptResolve=${host}:${port}:${resolveTo}`,
        '-c',
        'core.hooksPath=/dev/null',
      ];
      await git(
        [
          ...config,
          'clone',
          '--depth',
          '1',
          '--single-branch',
          '--branch',
          branch,
          '--no-tags',
          '--no-checkout',
          '--filter=blob:none',
          '--',
          gitUrl,
          path.join(dir, 'repo'),
        ],
        dir,
        timeoutMs,
        64 * 1024,
      ).catch((error: Error) => {
        throw new ManifestUnreadableError(
          `git clone of ${url.host} (branch ${branch}) failed: ${lastLine(error.message)}`,
        );
      });
      return await git(
        [...config, 'show', `HEAD:${MANIFEST_FILE}`],
        path.join(dir, 'repo'),
        timeoutMs,
        maxBytes,
      ).catch((error: Error) => {
        throw new ManifestUnreadableError(
          `${MANIFEST_FILE}: not found at the repo root (${lastLine(error.message)})`,
        );
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
}

function git(args: string[], cwd: string, timeoutMs: number, maxBuffer: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      {
        cwd,
        timeout: timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          GIT_TERMINAL_PROMPT: '0',
          GIT_CONFIG_NOSYSTEM: '1',
          HOME: cwd,
          ...(process.env.GIT_SSL_CAINFO ? { GIT_SSL_CAINFO: process.env.GIT_SSL_CAINFO } : {}),
        },
      },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${error.message}\n${stderr}`.trim()));
        else resolve(stdout);
      },
    );
  });
}

function lastLine(text: string): string {
  return text.trim().split('\n').filter(Boolean).at(-1) ?? text;
}
