import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { freePort } from './haproxy.ts';
import { spawnServer } from './processes.ts';

// Debian's Prometheus (package prometheus, installed by scripts/install-system-packages): promtool's
// linter for an exposition text, and a real server that scrapes targets and answers PromQL.

export const PROMTOOL = '/usr/bin/promtool';
export const PROMETHEUS = '/usr/bin/prometheus';

function required(binary: string): void {
  // No skipping when it is missing: scripts/setup installs it, so a machine without it is set up wrong.
  if (!existsSync(binary))
    throw new Error(
      `${binary} is missing: scripts/install-system-packages installs it (Debian package prometheus)`,
    );
}

/** `promtool check metrics` on an exposition text: its exit code and what it printed (problems). */
export function promtoolCheck(text: string): Promise<{ code: number | null; output: string }> {
  required(PROMTOOL);
  return new Promise((resolve, reject) => {
    const child = spawn(PROMTOOL, ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
    child.stdin.end(text);
  });
}

export type ScrapeJob = {
  name: string;
  /** host:port */
  target: string;
  path: string;
  bearer?: string;
};

export type Prometheus = {
  url: string;
  /** An instant query's vector: one number per series, with its labels. */
  query(expr: string): Promise<Array<{ labels: Record<string, string>; value: number }>>;
  /** Waits until `expr` gives exactly one value that satisfies `ok`; returns it. */
  waitFor(expr: string, ok: (value: number) => boolean, timeoutMs?: number): Promise<number>;
  /** Scrapes of a job that have completed (Prometheus's own `up` samples of it). */
  scrapes(job: string): Promise<number>;
};

/** A Prometheus scraping `jobs` every `intervalSeconds`, with its storage in a temporary directory. */
export async function startPrometheus(t: Test, jobs: ScrapeJob[], intervalSeconds = 1): Promise<Prometheus> {
  required(PROMETHEUS);
  const dir = mkdtempSync(path.join(tmpdir(), 'chronomap-prometheus-'));
  const port = await freePort();
  const config = path.join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    `global:
  scrape_interval: ${intervalSeconds}s
  scrape_timeout: ${intervalSeconds}s
scrape_configs:
${jobs
  .map(
    (job) => `  - job_name: ${job.name}
    metrics_path: ${job.path}
${job.bearer ? `    authorization: { type: Bearer, credentials: ${job.bearer} }\n` : ''}    static_configs: [{ targets: ['${job.target}'] }]`,
  )
  .join('\n')}
`,
  );
  const { stderr } = spawnServer(
    t,
    PROMETHEUS,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { dir },
  );
  const url = `http://127.0.0.1:${port}`;

  const query = async (expr: string) => {
    const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await response.json()) as {
      status: string;
      error?: string;
      data?: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
    };
    if (body.status !== 'success') throw new Error(`PromQL ${expr}: ${body.error ?? response.status}`);
    return (body.data?.result ?? []).map((entry) => ({
      labels: entry.metric,
      value: Number(entry.value[1]),
    }));
  };
  const waitFor = async (expr: string, ok: (value: number) => boolean, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    let last: unknown = 'no answer';
    while (Date.now() < deadline) {
      last = await query(expr).catch((error: unknown) => String(error));
      if (Array.isArray(last) && last.length === 1 && ok(last[0].value)) return last[0].value as number;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`Prometheus never gave ${expr} as wanted; last: ${JSON.stringify(last)}\n${stderr()}`);
  };
  const scrapes = async (job: string) =>
    (await query(`count_over_time(up{job="${job}"}[1h])`))[0]?.value ?? 0;

  // Ready when its API answers and every job was scraped once and found up.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ready = await fetch(`${url}/-/ready`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) {
      const up = await query('up').catch(() => []);
      if (up.length === jobs.length && up.every((entry) => entry.value === 1)) break;
    }
    if (Date.now() > deadline)
      throw new Error(`Prometheus did not come up with every target up:\n${stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { url, query, waitFor, scrapes };
}
