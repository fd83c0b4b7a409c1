// Shared set-up for the runner's tests: a configuration pointing at a private data directory,
// an app built around a RunManager, and the checks every sandbox test ends with (no workspace
// left, no container left).
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Test } from 'tap';
import { loadConfig, type RunnerConfig } from '../../src/config.ts';
import { buildApp } from '../../src/http/app.ts';
import { RunManager } from '../../src/run-manager.ts';
import type { RunRequest, RunResult } from '../../src/run-types.ts';
import { RUNNER_LABEL } from '../../src/sandbox/podman-args.ts';

export const API_KEY = 'test-key-0123456789abcdef';
export const AUTH = { authorization: `Bearer ${API_KEY}` };

export interface Harness {
  config: RunnerConfig;
  runs: RunManager;
  app: FastifyInstance;
  dataDir: string;
  /** POST /run through app.inject; returns status code and parsed body. */
  run(
    request: Partial<RunRequest> & Pick<RunRequest, 'runtime' | 'entrypoint'>,
  ): Promise<{ statusCode: number; body: RunResult & { error?: string; code?: string; message?: string } }>;
  workspaces(): string[];
  containers(): string[];
  close(): Promise<void>;
}

export function makeHarness(env: Record<string, string> = {}): Harness {
  const dataDir = mkdtempSync(join(tmpdir(), 'chronomap-runner-test-'));
  const config = loadConfig({ SCRAPER_API_KEY: API_KEY, SCRAPER_DATA_DIR: dataDir, ...env });
  const runs = new RunManager(config);
  const app = buildApp(runs);
  return {
    config,
    runs,
    app,
    dataDir,
    async run(request) {
      const response = await app.inject({
        method: 'POST',
        url: '/run',
        headers: AUTH,
        payload: { run_id: randomUUID(), ...request },
      });
      return { statusCode: response.statusCode, body: response.json() };
    },
    workspaces: () => readdirSync(dataDir),
    containers: () => {
      const ps = spawnSync(
        'podman',
        ['ps', '-a', '--format', '{{.Names}}', '--filter', `label=${RUNNER_LABEL}=${runs.instanceLabel}`],
        { encoding: 'utf8' },
      );
      return ps.stdout.split('\n').filter(Boolean);
    },
    async close() {
      await runs.shutdown();
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A run request for a one-file Python scraper. */
export const py = (source: string) => ({
  runtime: 'python' as const,
  entrypoint: 'main.py',
  code: { 'main.py': source },
});

/** Decodes the CSV of a successful run. */
export function csvOf(result: RunResult): string {
  return Buffer.from(result.output?.content_base64 ?? '', 'base64').toString('utf8');
}

/** Rows of a CSV written by the helper (no quoted line breaks in these tests). */
export function csvRecords(result: RunResult): string[][] {
  return csvOf(result)
    .split('\r\n')
    .filter(Boolean)
    .map((line) => line.split(','));
}

/**
 * Named cases that run `concurrency` at a time once `runScenarios` is called (each a subtest of
 * `t`), so a suite of container runs fits in its time on two cores.
 */
export function concurrentScenarios(t: Test, concurrency: number) {
  const queue: (() => Promise<void>)[] = [];
  return {
    scenario(name: string, fn: (t: Test) => Promise<void>): void {
      queue.push(() => t.test(name, fn).then(() => undefined));
    },
    async runScenarios(): Promise<void> {
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          for (let next = queue.shift(); next; next = queue.shift()) await next();
        }),
      );
    },
  };
}
