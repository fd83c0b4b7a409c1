// The scraper pages are rendered whole by the server: while a run is queued or running, or a repo's
// scrapers.yml is being read, this polls the record in the API (the page's own session) and
// reloads the page once the watched field has changed, so the page shows the new state. A page
// without data-watch is left alone; without JavaScript the page's reload link does the same.

const watched = document.querySelector('[data-watch]');

async function poll() {
  if (!(watched instanceof HTMLElement)) return;
  const { watch, watchField, watchValue } = watched.dataset;
  if (!watch || !watchField) return;
  try {
    const response = await fetch(watch, { headers: { accept: 'application/json' } });
    if (response.ok) {
      /** @type {Record<string, unknown>} */
      const doc = await response.json();
      if (String(doc[watchField]) !== watchValue) {
        // The same page without the flash message of the action that led here: it is old news now.
        const url = new URL(location.href);
        url.searchParams.delete('notice');
        url.searchParams.delete('error');
        // The same address with a #fragment would only scroll: reload it instead.
        if (url.href === location.href) location.reload();
        else location.replace(url.href);
        return;
      }
    }
  } catch {
    // A lost connection is tried again on the next tick.
  }
  setTimeout(poll, 1500);
}

void poll();
