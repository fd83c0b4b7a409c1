// The Explore page's detail panel: one event's fields, or the events at one spot; focus goes back
// to where it was when the panel closes (the close button or Escape).
import { getJson } from './api.js';
import { element, eventName, formatCount, formatDateTime, locatedByText } from './format.js';

const byId = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * The rows of an event's provenance in the details: its import's row and when it was stored and
 * last changed (nothing when its dataset hides provenance).
 * @param {any} provenance @returns {string[][]}
 */
function provenanceRows(provenance) {
  if (!provenance?.shown) return [];
  return [
    ...(provenance.row ? [['Source row', String(provenance.row)]] : []),
    ['Stored', formatDateTime(provenance.storedAt)],
    ...(provenance.changedAt !== provenance.storedAt
      ? [['Last changed', formatDateTime(provenance.changedAt)]]
      : []),
  ];
}

export class DetailPanel {
  /** @type {HTMLElement | null} */
  #returnFocus = null;

  #failed;

  /** @param {(error: unknown) => void} failed how a lookup that failed is reported */
  constructor(failed) {
    this.#failed = failed;
    byId('close-detail').addEventListener('click', () => this.close());
    document.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && !byId('detail').hidden) this.close();
    });
  }

  /**
   * One event of /api/v1/events, with a button to the map when it has a location.
   * @param {any} event @param {HTMLElement | null} from @param {any} map
   */
  showEvent(event, from, map) {
    const rows = [
      ['Dataset', event.dataset.title],
      ['Catalog', event.dataset.catalog],
      ['When', formatDateTime(event.eventTimestamp)],
      [
        'Where',
        event.location
          ? `${event.location.latitude.toFixed(4)}, ${event.location.longitude.toFixed(4)}`
          : 'no location',
      ],
      ...(locatedByText(event.locatedBy) ? [['Located by', locatedByText(event.locatedBy)]] : []),
      ...provenanceRows(event.provenance),
      ...Object.entries(event.data).map(([key, value]) => [
        key,
        typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value),
      ]),
    ];
    const list = element(
      'dl',
      {},
      rows.flatMap(([key, value]) => [element('dt', {}, [String(key)]), element('dd', {}, [String(value)])]),
    );
    /** @type {HTMLElement[]} */
    const body = [list];
    // Where the event came from (issue 38 §5): the public page, unless its dataset hides it.
    if (event.provenance?.shown) {
      body.push(
        element('p', {}, [element('a', { href: event.provenance.page }, ['Where this event came from'])]),
      );
    }
    if (event.location && map) {
      const show = element('button', { type: 'button' }, ['Show on map']);
      show.addEventListener('click', () =>
        map.easeTo({
          center: [event.location.longitude, event.location.latitude],
          zoom: Math.max(map.getZoom(), 12),
        }),
      );
      body.push(show);
    }
    this.open(eventName(event), body, from);
  }

  /**
   * The event `id` among the events at one spot (`spot`: /api/v1/events parameters of a tiny box).
   * @param {number} id @param {Record<string, unknown>} spot @param {any} map
   */
  async showEventAt(id, spot, map) {
    const from = /** @type {HTMLElement | null} */ (document.activeElement);
    try {
      const body = await getJson('/api/v1/events', { ...spot, limit: 1000 });
      const event = body.events.find((/** @type {any} */ candidate) => candidate.id === id);
      if (event) this.showEvent(event, from, map);
    } catch (error) {
      this.#failed(error);
    }
  }

  /** The events at one spot, as a list. @param {Record<string, unknown>} spot @param {number} count @param {any} map */
  async showEventsAt(spot, count, map) {
    const from = /** @type {HTMLElement | null} */ (document.activeElement);
    try {
      const body = await getJson('/api/v1/events', { ...spot, limit: 100 });
      const more =
        count > body.events.length ? [element('p', {}, [`and ${count - body.events.length} more`])] : [];
      this.open(
        `${formatCount(count)} events at this spot`,
        [
          element(
            'ol',
            { class: 'spot' },
            body.events.map((/** @type {any} */ event) => this.listItem(event, map)),
          ),
          ...more,
        ],
        from,
      );
    } catch (error) {
      this.#failed(error);
    }
  }

  /** An event as a list item whose button opens it here. @param {any} event @param {any} map */
  listItem(event, map) {
    const button = element('button', { type: 'button', class: 'event' }, [
      element('span', { class: 'name' }, [eventName(event)]),
      element('span', { class: 'meta' }, [
        `${event.dataset.title} · ${formatDateTime(event.eventTimestamp)}`,
      ]),
    ]);
    button.addEventListener('click', () => this.showEvent(event, button, map));
    return element('li', {}, [button]);
  }

  /**
   * @param {string} title @param {Node[]} body
   * @param {HTMLElement | null} from where focus returns on close (default: where it is now)
   */
  open(title, body, from = /** @type {HTMLElement | null} */ (document.activeElement)) {
    this.#returnFocus = from;
    const panel = byId('detail');
    byId('detail-title').textContent = title;
    byId('detail-body').replaceChildren(...body);
    panel.hidden = false;
    byId('detail-title').focus();
  }

  close() {
    byId('detail').hidden = true;
    this.#returnFocus?.focus();
    this.#returnFocus = null;
  }
}
