import { UnauthorizedError, type Viewer } from '../../domain/access.ts';
import { NotFoundError } from '../../domain/errors.ts';
import type { FeedEntry } from '../../domain/feeds/feed-entries.ts';
import { encodeCursor, parseCursor, positionAfter } from '../../domain/read/event-cursor.ts';
import type { EventView } from '../../domain/read/events.ts';
import { invalid, parseEventFilter, type RawQuery } from '../../domain/read/read-query.ts';
import { parseEventSort } from '../../domain/read/sort.ts';
import type { SavedView } from '../../domain/site/saved-views.ts';
import type { Clock } from '../../ports/clock.ts';
import type { EventTimes } from '../../ports/feeds/event-times.ts';
import type { EventReader } from '../../ports/read/event-reader.ts';
import { readView, type SavedViewDeps } from '../site/saved-views.ts';

// The feeds of a saved view (issue 39 §2): Atom and JSON Feed of its events newest-stored first,
// and an iCalendar of its events still to come. A feed shows exactly what the view shows its reader:
// the view's filters (catalog, datasets, time window; the map position is not a filter), read by the
// read model under the caller's access (a key limited to some catalogs, location privacy). Who may
// read the view is readView's rule; a caller without credentials who may not is told to
// authenticate (401: feed readers then ask for a key), a signed-in one sees no such view (404).

export type ViewFeedDeps = SavedViewDeps & { events: EventReader; times: EventTimes; clock: Clock };

/** Entries per feed page unless `limit` says otherwise, and at most. */
const FEED_PAGE = { default: 50, max: 200 } as const;
/** The calendar lists at most this many upcoming events (the soonest). */
const CALENDAR_LIMIT = 1000;

// Stored order: ids are given as events are stored, so the newest id is the newest stored event,
// whatever its own time (a back-dated import appears at the top). Keyset paging on the id is stable
// while events arrive: a page's cursor is the last id it showed.
const STORED_ORDER = parseEventSort('-id');

type FeedPage = { view: SavedView; entries: FeedEntry[]; nextCursor: string | null };

/** The view, for a feed: readView's rule, with a 401 instead of a 404 for a caller without credentials. */
async function readFeedView(deps: SavedViewDeps, viewer: Viewer, code: string): Promise<SavedView> {
  try {
    return await readView(deps, viewer, code);
  } catch (error) {
    if (viewer === null && error instanceof NotFoundError)
      throw new UnauthorizedError(
        'This feed needs an API key: Authorization: Bearer cmk_… (a read-only key is enough)',
      );
    throw error;
  }
}

/** The read API's filter of a view's state (the same parser as /api/v1/events). */
function viewQuery(view: SavedView): RawQuery {
  const { catalog, datasets, startDate, endDate } = view.state;
  return {
    ...(catalog ? { catalog } : {}),
    ...(datasets.length > 0 ? { datasets: datasets.join(',') } : {}),
    ...(startDate ? { startDate } : {}),
    ...(endDate ? { endDate } : {}),
  };
}

function feedLimit(raw: unknown): number {
  if (raw === undefined) return FEED_PAGE.default;
  const text = typeof raw === 'string' ? raw : '';
  const limit = /^[1-9]\d{0,3}$/.test(text) ? Number(text) : 0;
  if (limit < 1 || limit > FEED_PAGE.max) throw invalid('limit', `limit must be from 1 to ${FEED_PAGE.max}`);
  return limit;
}

async function withTimes(deps: ViewFeedDeps, events: EventView[]): Promise<FeedEntry[]> {
  const times = await deps.times.of(events.map((event) => event.id));
  return events.flatMap((event) => {
    const time = times.get(event.id);
    return time ? [{ event, ...time }] : [];
  });
}

/** One page of a view's feed, newest-stored first; `cursor` is the nextCursor of the page before. */
export async function readViewFeed(
  deps: ViewFeedDeps,
  viewer: Viewer,
  code: string,
  query: { cursor?: unknown; limit?: unknown },
): Promise<FeedPage> {
  const limit = feedLimit(query.limit);
  const after = parseCursor(query.cursor, STORED_ORDER);
  const view = await readFeedView(deps, viewer, code);
  const filter = parseEventFilter(viewQuery(view));
  const { eventsJson } = await deps.events.listEventsPage(viewer, filter, STORED_ORDER, {
    page: 1,
    limit,
    ...(after ? { after } : {}),
  });
  const events = JSON.parse(eventsJson.toString('utf8')) as EventView[];
  const last = events.length === limit ? events.at(-1) : undefined;
  const position = last ? positionAfter(STORED_ORDER, last) : null;
  return {
    view,
    entries: await withTimes(deps, events),
    nextCursor: position ? encodeCursor(STORED_ORDER, position) : null,
  };
}

/**
 * A view's events whose time is still to come (from now, or the view's own start if later), the
 * soonest first, at most CALENDAR_LIMIT: what a calendar subscribed to the view shows.
 */
export async function readViewCalendar(
  deps: ViewFeedDeps,
  viewer: Viewer,
  code: string,
): Promise<{ view: SavedView; entries: FeedEntry[] }> {
  const view = await readFeedView(deps, viewer, code);
  const query = viewQuery(view);
  const now = deps.clock.now().toISOString();
  const filter = parseEventFilter(query);
  const from = filter.dates.from !== null && filter.dates.from > now ? filter.dates.from : now;
  // A window that ended already has no future events.
  if (filter.dates.to !== null && filter.dates.to <= from) return { view, entries: [] };
  const { eventsJson } = await deps.events.listEventsPage(
    viewer,
    { ...filter, dates: { from, to: filter.dates.to } },
    parseEventSort('eventTimestamp'),
    { page: 1, limit: CALENDAR_LIMIT },
  );
  return { view, entries: await withTimes(deps, JSON.parse(eventsJson.toString('utf8')) as EventView[]) };
}
