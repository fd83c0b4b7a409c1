// Runner configuration, read once from the environment. Every SCRAPER_* variable is validated
// here so that a misconfigured runner refuses to start with one clear line instead of failing
// on the first run.
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface RunnerConfig {
  apiKey: string;
  port: number;
  host: string;
  maxConcurrent: number;
  defaultTimeoutSecs: number;
  defaultMemoryMb: number;
  maxRepoSizeMb: number;
  maxOutputSizeMb: number;
  /** Entries (files, directories) allowed in /output. */
  maxOutputFiles: number;
  dataDir: string;
  nodeEnv: string;
  /** Operator flag for tests: allow git hosts that resolve to loopback addresses. */
  allowLoopbackGit: boolean;
  cloneTimeoutSecs: number;
  /** How long `podman create` may take before it is killed and retried (see sandbox/container.ts). */
  createTimeoutSecs: number;
  cpus: number;
  network: string;
  dnsServers: string[];
  podmanPath: string;
  seccompProfile: string;
  imagePython: string;
  imageNode: string;
  /** Bytes of stdout and of stderr kept per run. */
  maxLogBytes: number;
  /** New flows per second per container address the firewall lets through (its flow rules, checked at start-up). */
  flowRate: number;
  /** Flows one container address may have tracked at once. */
  flowMax: number;
  /** Port of the stream check on 127.0.0.1, where the firewall's TPROXY rules divert TCP 443, 80 and 53. */
  streamCheckPort: number;
}

export class ConfigError extends Error {}

const defaultSeccomp = fileURLToPath(new URL('../seccomp.json', import.meta.url));

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim()))
    throw new ConfigError(`${name} must be a whole number between ${min} and ${max}, got '${raw}'`);
  const value = Number(raw.trim());
  if (value < min || value > max)
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function decimal(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw.trim());
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a number between ${min} and ${max}, got '${raw}'`);
  }
  return value;
}

function flag(env: Env, name: string): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '' || raw === 'false' || raw === '0' || raw === 'no') return false;
  if (raw === 'true' || raw === '1' || raw === 'yes') return true;
  throw new ConfigError(`${name} must be true or false, got '${env[name]}'`);
}

function text(env: Env, name: string, fallback: string, pattern?: RegExp): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (pattern && !pattern.test(raw)) throw new ConfigError(`${name} has an invalid value '${raw}'`);
  return raw;
}

const KNOWN = new Set([
  'SCRAPER_API_KEY',
  'SCRAPER_PORT',
  'SCRAPER_HOST',
  'SCRAPER_MAX_CONCURRENT',
  'SCRAPER_DEFAULT_TIMEOUT',
  'SCRAPER_DEFAULT_MEMORY',
  'SCRAPER_MAX_REPO_SIZE_MB',
  'SCRAPER_MAX_OUTPUT_SIZE_MB',
  'SCRAPER_MAX_OUTPUT_FILES',
  'SCRAPER_DATA_DIR',
  'SCRAPER_ALLOW_LOOPBACK_GIT',
  'SCRAPER_CLONE_TIMEOUT',
  'SCRAPER_CREATE_TIMEOUT',
  'SCRAPER_CPUS',
  'SCRAPER_NETWORK',
  'SCRAPER_DNS',
  'SCRAPER_PODMAN',
  'SCRAPER_SECCOMP_PROFILE',
  'SCRAPER_IMAGE_PYTHON',
  'SCRAPER_IMAGE_NODE',
  'SCRAPER_MAX_LOG_KB',
  'SCRAPER_FLOW_RATE',
  'SCRAPER_FLOW_MAX',
  'SCRAPER_STREAM_CHECK_PORT',
  // Read by the main application, not by the runner; tolerated so both can share one env file.
  'SCRAPER_RUNNER_URL',
]);

export function loadConfig(env: Env = process.env): RunnerConfig {
  // A typo in a variable name would otherwise silently fall back to a default.
  for (const name of Object.keys(env)) {
    if (name.startsWith('SCRAPER_') && !KNOWN.has(name)) throw new ConfigError(`unknown variable ${name}`);
  }
  const apiKey = env.SCRAPER_API_KEY ?? '';
  if (apiKey === '')
    throw new ConfigError(
      "SCRAPER_API_KEY is required (a random secret of at least 16 characters, the same as the main application's)",
    );
  if (apiKey.length < 16)
    throw new ConfigError(`SCRAPER_API_KEY must be at least 16 characters, it has ${apiKey.length}`);

  const dns = text(env, 'SCRAPER_DNS', '1.1.1.1,9.9.9.9', /^[0-9a-fA-F.:]+(,[0-9a-fA-F.:]+)*$/).split(',');
  return {
    apiKey,
    port: integer(env, 'SCRAPER_PORT', 4000, 0, 65535),
    host: text(env, 'SCRAPER_HOST', '0.0.0.0'),
    maxConcurrent: integer(env, 'SCRAPER_MAX_CONCURRENT', 3, 1, 256),
    defaultTimeoutSecs: integer(env, 'SCRAPER_DEFAULT_TIMEOUT', 300, 1, 3600),
    defaultMemoryMb: integer(env, 'SCRAPER_DEFAULT_MEMORY', 512, 64, 4096),
    maxRepoSizeMb: integer(env, 'SCRAPER_MAX_REPO_SIZE_MB', 50, 1, 10240),
    maxOutputSizeMb: integer(env, 'SCRAPER_MAX_OUTPUT_SIZE_MB', 100, 1, 10240),
    maxOutputFiles: integer(env, 'SCRAPER_MAX_OUTPUT_FILES', 1000, 1, 1_000_000),
    dataDir: resolve(text(env, 'SCRAPER_DATA_DIR', join(tmpdir(), 'chronomap-runner'))),
    nodeEnv: text(env, 'NODE_ENV', 'development'),
    allowLoopbackGit: flag(env, 'SCRAPER_ALLOW_LOOPBACK_GIT'),
    cloneTimeoutSecs: integer(env, 'SCRAPER_CLONE_TIMEOUT', 60, 1, 3600),
    createTimeoutSecs: integer(env, 'SCRAPER_CREATE_TIMEOUT', 30, 1, 600),
    cpus: decimal(env, 'SCRAPER_CPUS', 1, 0.1, 64),
    network: text(env, 'SCRAPER_NETWORK', 'scraper-sandbox', /^[A-Za-z0-9][A-Za-z0-9_.-]*$/),
    dnsServers: dns,
    podmanPath: text(env, 'SCRAPER_PODMAN', 'podman'),
    seccompProfile: resolve(text(env, 'SCRAPER_SECCOMP_PROFILE', defaultSeccomp)),
    imagePython: text(env, 'SCRAPER_IMAGE_PYTHON', 'localhost/runner-python'),
    imageNode: text(env, 'SCRAPER_IMAGE_NODE', 'localhost/runner-node'),
    maxLogBytes: integer(env, 'SCRAPER_MAX_LOG_KB', 1024, 1, 65536) * 1024,
    flowRate: integer(env, 'SCRAPER_FLOW_RATE', 1000, 1, 100000),
    flowMax: integer(env, 'SCRAPER_FLOW_MAX', 4096, 1, 1000000),
    streamCheckPort: integer(env, 'SCRAPER_STREAM_CHECK_PORT', 3443, 1, 65535),
  };
}
