import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { projectRoot } from '../src/adapters/config/environment.ts';

// Starts `chronomap api` for a benchmark on a free port and waits for its "listening on" line.

export async function startChronomapApi(
  env: Record<string, string>,
): Promise<{ base: string; child: ChildProcess; processes: number }> {
  const child = spawn(path.join(projectRoot, 'bin', 'chronomap'), ['api'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let processes = 1;
  const base = await new Promise<string>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`the API did not start:\n${seen}`)), 60_000);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = seen.match(/listening on (http:\/\/[^\s]+)/);
      if (match?.[1]) {
        processes = Number(seen.match(/\((\d+) processes/)?.[1] ?? 1);
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
    });
    child.on('exit', (code) => reject(new Error(`the API exited with ${code}:\n${seen}`)));
  });
  return { base, child, processes };
}

/**
 * The shipped policy with the anonymous rate limit lifted: the benchmark is one IP firing thousands
 * of requests. `counting` keeps the anonymous windows (each request still upserts its counters in
 * PostgreSQL, as deployed); without it the windows are removed, so the API skips the counters and
 * the figures are the read path's alone. The places of costly requests (`concurrentRequests`) are
 * lifted too, unless `concurrencyLimits` (bench/fair-share/run.ts measures them), and so are the
 * request windows of logged-in callers with `liftUserRates`.
 */
export function benchPolicyFile(
  counting: boolean,
  options: { concurrencyLimits?: boolean; liftUserRates?: boolean } = {},
): string {
  const policy = parseYaml(readFileSync(path.join(projectRoot, 'config', 'quotas.yaml'), 'utf8'));
  const window = (seconds: number) => ({ seconds, limit: 1_000_000_000 });
  policy.rateLimits.anonymous = counting
    ? { burst: window(10), hourly: window(3600), daily: window(86400) }
    : {};
  if (options.liftUserRates) for (const level of [0, 1, 2, 3, 4]) policy.rateLimits.byTrustLevel[level] = {};
  if (!options.concurrencyLimits) {
    const unlimited = { perAddress: 'unlimited', perAccount: 'unlimited', lowTrustShare: 'unlimited' };
    policy.concurrentRequests = {
      lowTrustLevel: 'none',
      collections: unlimited,
      reads: unlimited,
      exports: unlimited,
    };
  }
  const variant = `${counting}-${options.concurrencyLimits ?? false}-${options.liftUserRates ?? false}`;
  const file = path.join(os.tmpdir(), `chronomap-bench-quotas-${process.pid}-${variant}.yaml`);
  writeFileSync(file, stringifyYaml(policy));
  return file;
}
