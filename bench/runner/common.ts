// Shared by the runner benchmarks: a runner served over real HTTP on loopback, and figures.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../runner/src/config.ts';
import { buildApp } from '../../runner/src/http/app.ts';
import { RunManager } from '../../runner/src/run-manager.ts';

export const API_KEY = 'bench-key-0123456789abcdef';

export const TRIVIAL_SCRAPER =
  'from chronomap.scraper import output\noutput.write_row({"title": "bench", "n": 1})\noutput.save()\n';

export async function startRunner(env: Record<string, string> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'chronomap-bench-'));
  const config = loadConfig({
    SCRAPER_API_KEY: API_KEY,
    SCRAPER_DATA_DIR: dataDir,
    SCRAPER_HOST: '127.0.0.1',
    SCRAPER_PORT: '0',
    ...env,
  });
  const runs = new RunManager(config);
  const app = buildApp(runs);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  return { config, runs, app, dataDir, url: `http://127.0.0.1:${port}` };
}

export async function postRun(
  url: string,
  body: object,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${url}/run`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return (sorted[low] as number) + ((sorted[high] as number) - (sorted[low] as number)) * (position - low);
}

export const ms = (value: number) => `${value.toFixed(0)} ms`;
