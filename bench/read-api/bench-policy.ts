import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { projectRoot } from '../../src/adapters/config/environment.ts';

/**
 * The shipped policy with the anonymous rate limit lifted: the benchmark is one IP firing thousands
 * of requests. `counting` keeps the anonymous windows (each request still upserts its counters in
 * PostgreSQL, as deployed); without it the windows are removed, so the API skips the counters and
 * the figures are the read path's alone.
 */
export function benchPolicyFile(counting: boolean): string {
  const policy = parseYaml(readFileSync(path.join(projectRoot, 'config', 'quotas.yaml'), 'utf8'));
  const window = (seconds: number) => ({ seconds, limit: 1_000_000_000 });
  policy.rateLimits.anonymous = counting
    ? { burst: window(10), hourly: window(3600), daily: window(86400) }
    : {};
  const file = path.join(os.tmpdir(), `chronomap-bench-quotas-${process.pid}-${counting}.yaml`);
  writeFileSync(file, stringifyYaml(policy));
  return file;
}
