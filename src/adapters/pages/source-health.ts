import type { SourceHealthView } from '../../domain/source-health.ts';
import { DEFAULT_ALERT_AFTER } from '../../domain/source-health.ts';
import { type Html, html } from './html.ts';

// Source health on the /account pages of scheduled imports and scrapers (issue 39 §3): each
// source's streak of bad runs, the threshold its owner set, and a banner over the page naming the
// sources whose streak has reached it (their owner was sent a notice: account_notices).

/** "2 bad runs in a row (latest: failed) · alert after 3", or "healthy". */
export function healthLine(health: SourceHealthView | undefined): Html {
  if (!health) return html``;
  if (health.streak === 0)
    return html`<span class="muted source-health">healthy · alert after ${health.alertAfter} bad runs</span>`;
  const latest = health.last === 'failed' ? 'failed' : 'no new rows';
  // Classes of their own: a run's status badges (pending, failed) are another thing on the same card.
  const state = health.streak >= health.alertAfter ? 'streak-alerting' : 'streak';
  return html`<span class="badge ${state} source-health"
    >${health.streak} bad run${health.streak === 1 ? '' : 's'} in a row (latest: ${latest}) · alert after
    ${health.alertAfter}</span
  >`;
}

/** The form field of a source's threshold. */
export function alertAfterInput(health: SourceHealthView | undefined): Html {
  return html`<label
    >Alert after this many bad runs in a row (failed, or no new rows)
    <input
      type="number"
      name="alertAfter"
      min="1"
      max="100"
      value="${health?.alertAfter ?? DEFAULT_ALERT_AFTER}"
  /></label>`;
}

/** The banner over a page: its sources whose streak reached their threshold. */
export function healthBanner(sources: ReadonlyArray<{ name: string; health?: SourceHealthView }>): Html {
  const alerting = sources.filter((s) => s.health && s.health.streak >= s.health.alertAfter);
  if (alerting.length === 0) return html``;
  return html`<div class="flash error source-health-banner" role="alert">
    ${alerting.length === 1 ? 'A source needs attention' : `${alerting.length} sources need attention`}:
    ${alerting.map(
      (s, i) => html`${i > 0 ? ', ' : ''}<strong>${s.name}</strong> (${s.health?.streak} bad runs in a row)`,
    )}
  </div>`;
}
