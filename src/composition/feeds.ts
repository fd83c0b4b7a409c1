import { feedRoutes } from '../adapters/http/feeds/feed-routes.ts';
import type { HttpFeature } from '../adapters/http/http-feature.ts';
import { postgresEventTimes } from '../adapters/postgres/feeds/event-times.ts';
import type { DatabasePool } from '../adapters/postgres/database.ts';
import type { SavedViewDeps } from '../application/site/saved-views.ts';
import type { Clock } from '../ports/clock.ts';
import type { EventReader } from '../ports/read/event-reader.ts';

// The feeds of saved views (issue 39 §2): the site's views read through the read API's model, with
// the stored times of their events from the read pool. HTTP processes only.

export function feedsHttp(deps: {
  views: SavedViewDeps;
  events: EventReader;
  pool: DatabasePool;
  clock: Clock;
}): HttpFeature {
  const feeds = {
    ...deps.views,
    events: deps.events,
    times: postgresEventTimes(deps.pool),
    clock: deps.clock,
  };
  return { routes: async (app) => feedRoutes(app, { feeds }) };
}
