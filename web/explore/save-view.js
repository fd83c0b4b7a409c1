// "Save this view": keeps the page's current state as a saved view (POST /api/views, issue 38 §1)
// and shows its short link. Saving needs a login; without one the page says where to log in.

const TIMEOUT_MS = 10_000;

/** @param {string} id */
const byId = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * @param {() => import('./state.js').ExploreState} currentState the state, saved into the URL first
 * @param {() => { north: number, south: number, east: number, west: number }} currentBounds the map's box
 */
export function setupSaveView(currentState, currentBounds) {
  setupSubscribeLink(currentState, currentBounds);
  const form = /** @type {HTMLFormElement | null} */ (document.getElementById('save-view-form'));
  if (!form) return;
  const result = byId('save-view-result');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void save(currentState(), result, form);
  });
}

/**
 * @param {import('./state.js').ExploreState} state
 * @param {HTMLElement} result
 * @param {HTMLFormElement} form
 */
async function save(state, result, form) {
  const title = /** @type {HTMLInputElement} */ (byId('view-title')).value;
  const isPublic = /** @type {HTMLInputElement} */ (byId('view-public')).checked;
  const { lng, lat, zoom, catalog, datasets, startDate, endDate, mode } = state;
  result.textContent = 'Saving…';
  const button = /** @type {HTMLButtonElement} */ (form.querySelector('button'));
  button.disabled = true;
  try {
    const response = await fetch('/api/views', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      credentials: 'same-origin',
      body: JSON.stringify({
        title,
        isPublic,
        state: { lng, lat, zoom, catalog, datasets, startDate, endDate, mode },
      }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const body = await response.json().catch(() => ({}));
    if (response.status === 401) {
      const next = encodeURIComponent(window.location.pathname + window.location.search);
      result.replaceChildren(
        'Saving a view needs an account: ',
        link(`/account/login?next=${next}`, 'log in'),
        '.',
      );
    } else if (!response.ok) {
      result.textContent = `Not saved: ${body.message ?? `the server answered ${response.status}`}`;
    } else {
      result.replaceChildren(
        'Saved: ',
        link(body.url, body.url),
        ' · ',
        link('/account/views', 'your views and embeds'),
      );
    }
  } catch (error) {
    result.textContent =
      error instanceof DOMException && error.name === 'TimeoutError'
        ? `Not saved: no answer within ${TIMEOUT_MS / 1000} s`
        : `Not saved: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    button.disabled = false;
  }
}

/** @param {string} href @param {string} text */
function link(href, text) {
  const anchor = document.createElement('a');
  anchor.href = href;
  anchor.textContent = text;
  return anchor;
}

/**
 * "Subscribe to this view" (issue 39 §4): leads to the Subscriptions page with the form filled
 * from the page's filters, time window and the map's box, built when it is followed so that it is
 * always the current view.
 * @param {() => import('./state.js').ExploreState} currentState
 * @param {() => { north: number, south: number, east: number, west: number }} currentBounds
 */
function setupSubscribeLink(currentState, currentBounds) {
  const anchor = /** @type {HTMLAnchorElement | null} */ (document.getElementById('subscribe-view'));
  if (!anchor) return;
  const refresh = () => {
    const { catalog, datasets, startDate, endDate } = currentState();
    const params = new URLSearchParams();
    if (catalog) params.set('catalog', catalog);
    if (datasets.length) params.set('datasets', datasets.join(','));
    params.set('bounds', JSON.stringify(currentBounds()));
    if (startDate) params.set('startDate', startDate);
    if (endDate) params.set('endDate', endDate);
    anchor.href = `/account/subscriptions?${params.toString()}#new-subscription`;
  };
  // Before the browser follows it (mouse, keyboard or a new tab).
  for (const kind of ['pointerdown', 'focus', 'click']) anchor.addEventListener(kind, refresh);
}
