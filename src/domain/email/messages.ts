import { backoffMs } from '../backoff.ts';
import { escapeHtml } from '../html-escape.ts';

// The mails Chronomap sends, rendered at send time from what the outbox row holds (so the links use
// the base URL of the process that sends). Everything from users (titles, names) is hostile: HTML is
// escaped, and the subject loses control characters so a name cannot add a header line.

export type DigestEvent = {
  id: string;
  title: string | null;
  timestamp: string | null;
  datasetTitle: string;
  url: string;
};

export type MailPayload =
  | { kind: 'confirm'; address: string; token: string }
  | { kind: 'source-health'; message: string; unsubscribeToken: string }
  | {
      kind: 'digest';
      subscriptionName: string;
      events: DigestEvent[];
      moreCount: number;
      manageUrl: string;
      unsubscribeToken: string;
    };

type RenderedMail = { subject: string; text: string; html: string; unsubscribeUrl: string | null };

function oneLine(text: string, max = 150): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Only http(s) links go into a mail; anything else becomes the manage page. */
function safeUrl(url: string, fallback: string): string {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : fallback;
  } catch {
    return fallback;
  }
}

function unsubscribeUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/$/, '')}/email/unsubscribe/${token}`;
}

function confirmUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/$/, '')}/email/confirm/${token}`;
}

function page(body: string, footer: string): string {
  return `<!doctype html><html><body style="font-family:sans-serif">${body}<hr><p style="color:#666;font-size:small">${footer}</p></body></html>`;
}

export function renderMail(payload: MailPayload, baseUrl: string): RenderedMail {
  if (payload.kind === 'confirm') {
    const link = confirmUrl(baseUrl, payload.token);
    return {
      subject: 'Confirm your e-mail address for Chronomap',
      text: `Someone (we hope you) added ${payload.address} to a Chronomap account.\n\nConfirm it: ${link}\n\nThe link works for 48 hours. If it was not you, ignore this mail: nothing is sent to an unconfirmed address.\n`,
      html: page(
        `<p>Someone (we hope you) added ${escapeHtml(payload.address)} to a Chronomap account.</p><p><a href="${escapeHtml(link)}">Confirm this address</a></p><p>The link works for 48 hours.</p>`,
        'If it was not you, ignore this mail: nothing is sent to an unconfirmed address.',
      ),
      unsubscribeUrl: null,
    };
  }
  const unsubscribe = unsubscribeUrl(baseUrl, payload.unsubscribeToken);
  if (payload.kind === 'source-health') {
    return {
      subject: oneLine(`Chronomap: ${payload.message}`),
      text: `${payload.message}\n\nStop these alerts: ${unsubscribe}\n`,
      html: page(
        `<p>${escapeHtml(payload.message)}</p>`,
        `<a href="${escapeHtml(unsubscribe)}">Stop source-health alerts to this address</a>`,
      ),
      unsubscribeUrl: unsubscribe,
    };
  }
  const manage = safeUrl(payload.manageUrl, baseUrl);
  const lines = payload.events.map((event) => {
    const title = event.title ?? '(untitled event)';
    const when = event.timestamp ?? 'no time';
    return { title, when, dataset: event.datasetTitle, url: safeUrl(event.url, manage) };
  });
  const more = payload.moreCount > 0 ? `…and ${payload.moreCount} more.` : '';
  return {
    subject: oneLine(
      `Chronomap: ${payload.events.length + payload.moreCount} new in "${payload.subscriptionName}"`,
    ),
    text:
      `New events in your subscription "${payload.subscriptionName}":\n\n` +
      lines.map((l) => `- ${l.title} (${l.when}, ${l.dataset})\n  ${l.url}\n`).join('') +
      (more ? `\n${more}\n` : '') +
      `\nManage: ${manage}\nUnsubscribe from this subscription: ${unsubscribe}\n`,
    html: page(
      `<p>New events in your subscription “${escapeHtml(payload.subscriptionName)}”:</p><ul>` +
        lines
          .map(
            (l) =>
              `<li><a href="${escapeHtml(l.url)}">${escapeHtml(l.title)}</a> (${escapeHtml(l.when)}, ${escapeHtml(l.dataset)})</li>`,
          )
          .join('') +
        `</ul>${more ? `<p>${escapeHtml(more)}</p>` : ''}<p><a href="${escapeHtml(manage)}">Manage subscriptions</a></p>`,
      `<a href="${escapeHtml(unsubscribe)}">Unsubscribe from this subscription</a>`,
    ),
    unsubscribeUrl: unsubscribe,
  };
}

/**
 * Attempts before a mail is given up, and the wait before attempt n+1 (`baseMs`, by default 30 s,
 * doubling, at most 1 h).
 */
export const MAX_SEND_ATTEMPTS = 8;
export function retryDelayMs(attempts: number, baseMs = 30_000): number {
  return backoffMs(attempts, baseMs);
}
