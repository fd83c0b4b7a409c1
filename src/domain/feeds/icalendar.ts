import { entryText, entryTitle, type FeedEntry, originHost } from './feed-entries.ts';

// The iCalendar feed of a saved view (RFC 5545): its events with future timestamps, one VEVENT
// each, that calendar programs subscribe to. Lines end in CRLF and are folded at 75 octets (§3.1,
// never inside a UTF-8 character); TEXT values escape backslash, semicolon, comma and newlines
// (§3.3.11); an event's UID stays the same across fetches (its id and the service's host), and its
// DTSTAMP is when the event was last changed in the store (§3.8.7.2, a calendar without METHOD).

const MAX_LINE_OCTETS = 75;

// Control characters TEXT may not hold (§3.3.11: any but HTAB); newlines are escaped first.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000A-\u001F\u007F]/g;

/** A TEXT value (§3.3.11): `\` `;` `,` escaped, every newline as `\n`, other controls left out. */
export function escapeText(text: string): string {
  return text
    .replace(/\\/g, '\\\\')
    .replace(/;/g, '\\;')
    .replace(/,/g, '\\,')
    .replace(/\r\n|\r|\n/g, '\\n')
    .replace(CONTROL, '');
}

/**
 * One content line folded (§3.1): at most 75 octets a line, each continuation starting with a
 * space, and a UTF-8 character never split between lines. Answers the lines joined with CRLF.
 */
export function foldLine(line: string): string {
  const parts: string[] = [];
  let current = '';
  let octets = 0;
  for (const character of line) {
    const size = Buffer.byteLength(character, 'utf8');
    // A continuation's leading space counts towards its 75 octets.
    if (octets + size > MAX_LINE_OCTETS) {
      parts.push(current);
      current = ' ';
      octets = 1;
    }
    current += character;
    octets += size;
  }
  parts.push(current);
  return parts.join('\r\n');
}

/** An ISO 8601 instant as an iCalendar UTC DATE-TIME: 20261128T093000Z. */
export function calendarTime(iso: string): string {
  return new Date(iso)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/** The UID of an event (§3.8.4.7): the same on every fetch, unique to this service. */
export function eventUid(origin: string, eventId: number): string {
  return `event-${eventId}@${originHost(origin)}`;
}

function vevent(origin: string, viewUrl: string, entry: FeedEntry): string[] {
  const { event } = entry;
  const lines = [
    'BEGIN:VEVENT',
    `UID:${eventUid(origin, event.id)}`,
    `DTSTAMP:${calendarTime(entry.updatedAt)}`,
    `CREATED:${calendarTime(entry.storedAt)}`,
    `LAST-MODIFIED:${calendarTime(entry.updatedAt)}`,
    `DTSTART:${calendarTime(event.eventTimestamp)}`,
    `SUMMARY:${escapeText(entryTitle(event))}`,
    `DESCRIPTION:${escapeText(entryText(event))}`,
    `CATEGORIES:${escapeText(event.dataset.title)}`,
    `URL:${viewUrl}`,
  ];
  if (event.location) lines.push(`GEO:${event.location.latitude};${event.location.longitude}`);
  lines.push('END:VEVENT');
  return lines;
}

/** The calendar of a view's future events: a VCALENDAR text, CRLF line ends, folded. */
export function icalendar(
  head: { title: string; origin: string; code: string },
  entries: readonly FeedEntry[],
): string {
  const viewUrl = `${head.origin}/v/${head.code}`;
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Chronomap//Saved view calendar//EN',
    'CALSCALE:GREGORIAN',
    `X-WR-CALNAME:${escapeText(head.title)}`,
    ...entries.flatMap((entry) => vevent(head.origin, viewUrl, entry)),
    'END:VCALENDAR',
  ];
  return lines.map(foldLine).join('\r\n') + '\r\n';
}
