// The caps on a run's /output as the runner sees them: total bytes (each entry counted as at
// least 4 KiB), number of entries, and no symbolic link or special file anywhere in it. Checked
// every 200 ms while the scraper runs (the kernel's tmpfs caps stop a flood in the meantime,
// capped-mounts.ts) and once more after it ended.
import { treeUsage } from './fs-size.ts';
import type { StopReason } from './sandbox/container.ts';

export interface OutputCaps {
  maxBytes: number;
  maxFiles: number;
}

export type OutputProblem = Extract<StopReason, 'output-too-large' | 'too-many-files' | 'output-link'>;

export async function outputProblem(
  dir: string,
  caps: OutputCaps,
  signal?: AbortSignal,
): Promise<OutputProblem | undefined> {
  const usage = await treeUsage(dir, { maxEntries: caps.maxFiles, maxBytes: caps.maxBytes, signal });
  if (usage.link !== undefined || usage.special !== undefined) return 'output-link';
  if (usage.entries > caps.maxFiles) return 'too-many-files';
  if (usage.bytes > caps.maxBytes) return 'output-too-large';
  return undefined;
}

/** Why a run failed for its output, as `[message, code]` of the run result. */
export function describeOutputProblem(problem: OutputProblem, caps: OutputCaps): [string, string] {
  switch (problem) {
    case 'output-link':
      return [
        '/output holds a symbolic link or a special file (only regular files and directories are allowed)',
        'OUTPUT_LINK',
      ];
    case 'too-many-files':
      return [
        `/output holds more than SCRAPER_MAX_OUTPUT_FILES (${caps.maxFiles}) entries`,
        'INVALID_OUTPUT',
      ];
    case 'output-too-large':
      return [
        `the output is larger than SCRAPER_MAX_OUTPUT_SIZE_MB (${caps.maxBytes / 1024 / 1024} MB)`,
        'INVALID_OUTPUT',
      ];
  }
}

/**
 * Watches `dir` every `intervalMs` until `stop()` is called, calling `onProblem` once with the
 * first problem seen. A walk in progress is abandoned when the watch stops.
 */
export function watchOutput(
  dir: string,
  caps: OutputCaps,
  onProblem: (problem: OutputProblem) => void,
  intervalMs = 200,
): { stop(): void } {
  const done = new AbortController();
  let checking = false;
  let reported = false;
  const timer = setInterval(async () => {
    if (checking || reported) return;
    checking = true;
    try {
      const problem = await outputProblem(dir, caps, done.signal);
      if (problem !== undefined && !done.signal.aborted) {
        reported = true;
        onProblem(problem);
      }
    } finally {
      checking = false;
    }
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      done.abort();
    },
  };
}
