// Small formatting helpers for the page.

const numberFormat = new Intl.NumberFormat('en');

/** @param {number} value */
export function formatCount(value) {
  return numberFormat.format(value);
}

/** @param {number} value */
export function shortCount(value) {
  if (value >= 1e6) return `${(value / 1e6).toFixed(value >= 1e7 ? 0 : 1)}M`;
  if (value >= 1e4) return `${Math.round(value / 1e3)}k`;
  if (value >= 1e3) return `${(value / 1e3).toFixed(1)}k`;
  return String(value);
}

/** @param {string} iso */
export function formatDate(iso) {
  return iso.slice(0, 10);
}

const DAY_MS = 86_400_000;

/**
 * A timeline label for a bucket that starts at `iso` and lasts `bucketMs`: the date, or, for buckets
 * shorter than a day (a view of a few days), the day and the time, so the ticks of one day are not
 * all the same date.
 * @param {string} iso @param {number} bucketMs
 */
export function bucketLabel(iso, bucketMs) {
  return bucketMs >= DAY_MS ? formatDate(iso) : `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
}

/** @param {string} iso */
export function formatDateTime(iso) {
  return iso.replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, ' UTC');
}

/**
 * A readable name for an event: its title (the column mapped as the title at import), else a
 * likely field of `data` for events stored without one, else its id.
 * @param {{ id: number, title?: string | null, data: Record<string, unknown> }} event
 */
export function eventName(event) {
  if (typeof event.title === 'string' && event.title.trim() !== '') return event.title;
  for (const key of ['title', 'name', 'place', 'label', 'description']) {
    const value = event.data[key];
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return `Event ${event.id}`;
}

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, string>} [attributes]
 * @param {(Node | string)[]} [children]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function element(tag, attributes = {}, children = []) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

/**
 * How an event was located, for its details (`locatedBy` of /api/v1/events; docs/ingestion.md,
 * "Reading a geocoding result"); null when it has no location.
 * @param {any} locatedBy
 * @returns {string | null}
 */
export function locatedByText(locatedBy) {
  if (!locatedBy) return null;
  if (locatedBy.method === 'coordinates') return 'its own coordinates';
  const matched = [locatedBy.matchedName, locatedBy.matchedRegion, locatedBy.matchedCountry]
    .filter((part) => typeof part === 'string' && part !== '')
    .join(', ');
  const confidence = typeof locatedBy.confidence === 'number' ? locatedBy.confidence.toFixed(2) : '?';
  return `geocoded from “${locatedBy.address}” as ${matched || 'a place'} (${locatedBy.provider}, confidence ${confidence})`;
}
