// The `scrapers.yml` manifest: validated here, against every rule of the spec's manifest table,
// from the value the YAML parser produced. Every violation is reported with its path
// (`scrapers[2].limits.timeout`) so that a user can fix the whole file in one go.

export type Runtime = 'python' | 'node';

/**
 * A scraper's (and its repo's) slug, exactly the spec's manifest rule: lowercase letters, digits and
 * hyphens, in any order. Deliberately not catalog slugs' stricter form (domain/collections/slugs.ts):
 * refusing `-a` or `a--b` here would refuse manifests the spec accepts. Migration 0400 checks the same.
 */
export const SLUG_PATTERN = /^[a-z0-9-]+$/;
export const MAX_NAME_LENGTH = 255;
export const MAX_SLUG_LENGTH = 128;
const DEFAULT_OUTPUT_FILE = 'data.csv';
// The runner writes the CSV to /output itself and accepts only a plain name there (runner/src/run-manager.ts).
const OUTPUT_FILE_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,254}$/;
const TIMEOUT_LIMITS = { min: 10, max: 3600, default: 300 } as const;
const MEMORY_LIMITS = { min: 64, max: 4096, default: 512 } as const;

/** One scraper as the manifest declares it, with every default applied. */
export type ManifestScraper = {
  name: string;
  slug: string;
  runtime: Runtime;
  entrypoint: string;
  outputFile: string;
  schedule: string | null;
  timeoutSecs: number;
  memoryMb: number;
};

type ManifestProblem = { path: string; message: string };

type ManifestResult = { ok: true; scrapers: ManifestScraper[] } | { ok: false; problems: ManifestProblem[] };

/** Checks that go beyond the field count of a cron expression are the cron library's (an adapter). */
type CronCheck = (expression: string) => string | undefined;

export function validateManifest(document: unknown, cronProblem: CronCheck): ManifestResult {
  const problems: ManifestProblem[] = [];
  const report = (path: string, message: string) => problems.push({ path, message });

  if (!isObject(document)) {
    report('(root)', 'the manifest must be a mapping with a "scrapers" list');
    return { ok: false, problems };
  }
  for (const key of Object.keys(document)) {
    if (key !== 'scrapers' && key !== 'defaults') report(key, 'unknown field (expected scrapers, defaults)');
  }

  const defaults = readDefaults(document.defaults, report);

  const list = document.scrapers;
  if (list === undefined || list === null) {
    report('scrapers', 'is required');
    return { ok: false, problems };
  }
  if (!Array.isArray(list)) {
    report('scrapers', 'must be a list');
    return { ok: false, problems };
  }
  if (list.length === 0) report('scrapers', 'must declare at least one scraper');

  const scrapers: ManifestScraper[] = [];
  const slugsSeen = new Map<string, number>();
  list.forEach((entry: unknown, index) => {
    const at = `scrapers[${index}]`;
    if (!isObject(entry)) {
      report(at, 'must be a mapping');
      return;
    }
    const before = problems.length;
    for (const key of Object.keys(entry)) {
      if (!SCRAPER_FIELDS.includes(key))
        report(`${at}.${key}`, `unknown field (expected ${SCRAPER_FIELDS.join(', ')})`);
    }

    const name = requiredString(entry.name, `${at}.name`, report);
    if (name !== undefined && name.length > MAX_NAME_LENGTH)
      report(`${at}.name`, `must be at most ${MAX_NAME_LENGTH} characters`);

    const slug = requiredString(entry.slug, `${at}.slug`, report);
    if (slug !== undefined) {
      if (!SLUG_PATTERN.test(slug))
        report(`${at}.slug`, 'may contain only lowercase letters, digits and hyphens');
      if (slug.length > MAX_SLUG_LENGTH)
        report(`${at}.slug`, `must be at most ${MAX_SLUG_LENGTH} characters`);
      const first = slugsSeen.get(slug);
      if (first !== undefined) report(`${at}.slug`, `"${slug}" is already used by scrapers[${first}]`);
      else slugsSeen.set(slug, index);
    }

    let runtime: Runtime = defaults.runtime ?? 'python';
    if (entry.runtime !== undefined) {
      if (isRuntime(entry.runtime)) runtime = entry.runtime;
      else report(`${at}.runtime`, 'must be "python" or "node"');
    }

    const entrypoint = requiredString(entry.entrypoint, `${at}.entrypoint`, report);
    if (entrypoint !== undefined) {
      const problem = relativePathProblem(entrypoint);
      if (problem) report(`${at}.entrypoint`, problem);
    }

    let outputFile = DEFAULT_OUTPUT_FILE;
    if (entry.output !== undefined) {
      if (typeof entry.output !== 'string' || entry.output.trim() === '')
        report(`${at}.output`, 'must be a file name');
      else if (!OUTPUT_FILE_NAME.test(entry.output) || entry.output.includes('..'))
        report(`${at}.output`, 'must be a plain file name in /output (letters, digits, . _ -; no folders)');
      else outputFile = entry.output;
    }

    let schedule: string | null = null;
    if (entry.schedule !== undefined && entry.schedule !== null) {
      if (typeof entry.schedule !== 'string')
        report(`${at}.schedule`, 'must be a five-field cron expression');
      else {
        const problem = scheduleProblem(entry.schedule, cronProblem);
        if (problem) report(`${at}.schedule`, problem);
        else schedule = entry.schedule.trim();
      }
    }

    const limits = readLimits(entry.limits, `${at}.limits`, report);

    if (problems.length === before && name !== undefined && slug !== undefined && entrypoint !== undefined) {
      scrapers.push({
        name,
        slug,
        runtime,
        entrypoint,
        outputFile,
        schedule,
        timeoutSecs: limits.timeout ?? defaults.timeout ?? TIMEOUT_LIMITS.default,
        memoryMb: limits.memory ?? defaults.memory ?? MEMORY_LIMITS.default,
      });
    }
  });

  return problems.length > 0 ? { ok: false, problems } : { ok: true, scrapers };
}

/** The problems as one text, one per line, for the repo's `lastSyncError`. */
export function describeProblems(problems: readonly ManifestProblem[]): string {
  return problems.map((problem) => `${problem.path}: ${problem.message}`).join('\n');
}

/** A five-field cron expression; the spec's granularity is one minute, so seconds fields are refused. */
function scheduleProblem(expression: string, cronProblem: CronCheck): string | undefined {
  const fields = expression.trim().split(/\s+/).filter(Boolean);
  if (fields.length !== 5) return `must be a five-field cron expression (got ${fields.length} fields)`;
  const problem = cronProblem(expression.trim());
  return problem ? `is not a valid cron expression: ${problem}` : undefined;
}

/** Paths inside a repo: relative, without `..`, without a leading `/` or a backslash. */
function relativePathProblem(path: string): string | undefined {
  if (path.trim() === '') return 'must not be empty';
  if (path.startsWith('/')) return 'must be relative to the repository root (no leading "/")';
  if (path.includes('\\')) return 'must use "/" as separator';
  if (path.split('/').includes('..') || path.includes('..')) return 'must not contain ".."';
  return undefined;
}

const SCRAPER_FIELDS = ['name', 'slug', 'runtime', 'entrypoint', 'output', 'schedule', 'limits'];

type Report = (path: string, message: string) => void;

function readDefaults(
  value: unknown,
  report: Report,
): { runtime?: Runtime; timeout?: number; memory?: number } {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) {
    report('defaults', 'must be a mapping');
    return {};
  }
  const out: { runtime?: Runtime; timeout?: number; memory?: number } = {};
  for (const key of Object.keys(value)) {
    if (key !== 'runtime' && key !== 'limits')
      report(`defaults.${key}`, 'unknown field (expected runtime, limits)');
  }
  if (value.runtime !== undefined) {
    if (isRuntime(value.runtime)) out.runtime = value.runtime;
    else report('defaults.runtime', 'must be "python" or "node"');
  }
  const limits = readLimits(value.limits, 'defaults.limits', report);
  if (limits.timeout !== undefined) out.timeout = limits.timeout;
  if (limits.memory !== undefined) out.memory = limits.memory;
  return out;
}

function readLimits(value: unknown, at: string, report: Report): { timeout?: number; memory?: number } {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) {
    report(at, 'must be a mapping with timeout and/or memory');
    return {};
  }
  for (const key of Object.keys(value)) {
    if (key !== 'timeout' && key !== 'memory')
      report(`${at}.${key}`, 'unknown field (expected timeout, memory)');
  }
  const out: { timeout?: number; memory?: number } = {};
  const timeout = integerIn(value.timeout, `${at}.timeout`, TIMEOUT_LIMITS, 'seconds', report);
  if (timeout !== undefined) out.timeout = timeout;
  const memory = integerIn(value.memory, `${at}.memory`, MEMORY_LIMITS, 'MB', report);
  if (memory !== undefined) out.memory = memory;
  return out;
}

function integerIn(
  value: unknown,
  at: string,
  range: { min: number; max: number },
  unit: string,
  report: Report,
): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    report(at, `must be an integer (${unit})`);
    return undefined;
  }
  if (value < range.min || value > range.max) {
    report(at, `must be from ${range.min} to ${range.max} ${unit} (got ${value})`);
    return undefined;
  }
  return value;
}

function requiredString(value: unknown, at: string, report: Report): string | undefined {
  if (value === undefined || value === null) {
    report(at, 'is required');
    return undefined;
  }
  if (typeof value !== 'string' || value.trim() === '') {
    report(at, 'must be a non-empty string');
    return undefined;
  }
  return value;
}

function isRuntime(value: unknown): value is Runtime {
  return value === 'python' || value === 'node';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
