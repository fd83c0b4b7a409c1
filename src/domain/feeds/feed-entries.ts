import type { EventView } from '../read/events.ts';

// What every feed of a saved view is made of (issue 39 §2): the view's events with the times the
// database stored and last changed them. Atom (atom.ts), JSON Feed (json-feed.ts) and iCalendar
// (icalendar.ts) write the same entries; these helpers keep what they say about an event alike.

export type FeedEntry = {
  event: EventView;
  /** When the event was stored (ISO 8601): a back-dated import is new here, whatever its own time. */
  storedAt: string;
  /** When the event was last changed (ISO 8601). */
  updatedAt: string;
};

/** What a feed is about: the view, its links, and when the feed last changed. */
export type FeedHead = {
  title: string;
  description: string;
  /** The service's public origin (the one setting for absolute links), e.g. https://maps.example.org. */
  origin: string;
  code: string;
  /** ISO 8601: the newest change among the entries, or the view's own when there are none. */
  updated: string;
};

/** A feed page's links: itself, the first page and the next (absent on the last page). */
export type FeedLinks = { self: string; first: string; next: string | null };

/** The host of the public origin, which names the service in ids (tag URIs, iCalendar UIDs). */
export function originHost(origin: string): string {
  return URL.canParse(origin) ? new URL(origin).hostname : 'localhost';
}

/**
 * An event's id in every feed: a tag URI (RFC 4151) of the service's host and the event's id, so it
 * stays the same across pages, feeds and refetches, and differs between services.
 */
export function entryId(origin: string, eventId: number): string {
  return `tag:${originHost(origin)},2026:events/${eventId}`;
}

/** An event's title in a feed: its mapped title, or a name that says which event it is. */
export function entryTitle(event: EventView): string {
  const title = event.title?.trim();
  return title ? title : `Event ${event.id} in ${event.dataset.title}`;
}

/** A plain-text account of an event: dataset, time, place and its data fields, one a line. */
export function entryText(event: EventView): string {
  const lines = [
    `Dataset: ${event.dataset.title} (${event.dataset.catalog})`,
    `Time: ${event.eventTimestamp}`,
  ];
  if (event.location) lines.push(`Location: ${event.location.latitude}, ${event.location.longitude}`);
  for (const [key, value] of Object.entries(event.data)) {
    if (value === null || value === undefined || value === '') continue;
    lines.push(`${key}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`);
  }
  return lines.join('\n');
}
