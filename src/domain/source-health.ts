import { ValidationError } from './errors.ts';

// Source health (issue 39 §3): a scheduled import or a scraper whose runs fail, or bring no new
// rows, N times in a row tells its owner. N is the source's own `alertAfter` (default 3). The
// streak counts bad runs of either kind; its owner is told once, when the streak reaches N, and
// again only after a good run (one that brought new rows) has ended it and a new streak reaches N.

/** What a finished run says about its source: it failed, it brought no new rows, or it did. */
export type RunHealth = 'failed' | 'empty' | 'ok';

export type SourceHealth = {
  /** Bad runs in a row, up to the latest. */
  streak: number;
  /** The latest bad run's kind; null while the streak is 0. */
  last: 'failed' | 'empty' | null;
  /** Whether the owner was told about this streak. */
  alerted: boolean;
};

export const DEFAULT_ALERT_AFTER = 3;
const MAX_ALERT_AFTER = 100;

/** The health after a run, and whether this run is the one to tell the owner about. */
export function advanceHealth(
  current: SourceHealth,
  run: RunHealth,
  alertAfter: number,
): { next: SourceHealth; alert: boolean } {
  if (run === 'ok') return { next: { streak: 0, last: null, alerted: false }, alert: false };
  const streak = current.streak + 1;
  const alert = !current.alerted && streak >= alertAfter;
  return { next: { streak, last: run, alerted: current.alerted || alert }, alert };
}

/** A scraper run's health: any status but success failed; a success with no output rows is empty. */
export function scraperRunHealth(status: string, outputRows: number | null): RunHealth {
  if (status !== 'success') return 'failed';
  return outputRows === 0 ? 'empty' : 'ok';
}

/** The notice its owner reads when a source's streak reaches its threshold. */
export function healthNotice(
  source: { kind: 'schedule' | 'scraper'; name: string },
  health: SourceHealth,
): string {
  const what = source.kind === 'schedule' ? 'Scheduled import' : 'Scraper';
  const why = health.last === 'failed' ? 'the latest failed' : 'the latest brought no new rows';
  return `${what} "${source.name}" has had ${health.streak} bad runs in a row (${why}). Check its source.`;
}

/** `alertAfter` from a form or the API: an integer from 1 to 100. */
export function parseAlertAfter(value: unknown): number {
  const number = typeof value === 'string' && /^\d{1,3}$/.test(value.trim()) ? Number(value.trim()) : value;
  if (typeof number !== 'number' || !Number.isInteger(number) || number < 1 || number > MAX_ALERT_AFTER)
    throw new ValidationError(`alertAfter must be a whole number from 1 to ${MAX_ALERT_AFTER}`, {
      field: 'alertAfter',
    });
  return number;
}

/** A source's health as its pages show it: the bad runs in a row and the threshold it alerts at. */
export type SourceHealthView = { streak: number; last: 'failed' | 'empty' | null; alertAfter: number };
