import type { OgcDeps } from '../../../application/read/ogc-features.ts';
import type { HttpFeature } from '../http-feature.ts';
import { type ReadApiDeps, v1EventRoutes } from './events-routes.ts';
import { v1ChangeRoutes } from './changes-routes.ts';
import { v1ExportRoutes } from './exports-routes.ts';
import { exportJobRoutes } from './export-jobs-routes.ts';
import { ogcFeatureRoutes } from './ogc-routes.ts';
import { provenancePage } from './provenance-page.ts';
import { type TileRoutesDeps, v1TileRoutes } from './tiles-routes.ts';

// The public read API's routes: /api/v1 (events, tiles, exports) and /ogc, over one read model.

type ReadHttpDeps = {
  readApi: ReadApiDeps;
  /** The vector tiles of the read API (/api/v1/tiles). */
  tiles?: TileRoutesDeps;
  /** OGC API – Features under /ogc (the read model of /api/v1 and a clock for timeStamp). */
  ogc?: OgcDeps;
};

export function readHttp(deps: ReadHttpDeps): HttpFeature {
  return {
    routes: async (app) => {
      await app.register(v1EventRoutes, deps.readApi);
      const { provenance } = deps.readApi;
      if (provenance) await app.register(provenancePage, { provenance });
      if (deps.readApi.changes) await app.register(v1ChangeRoutes, { changes: deps.readApi.changes });
      if (deps.tiles) await app.register(v1TileRoutes, deps.tiles);
      if (deps.ogc) await app.register(ogcFeatureRoutes, deps.ogc);
      const { exporter, exportFiles, exportEncoder } = deps.readApi;
      if (exporter)
        await app.register(v1ExportRoutes, {
          exporter,
          ...(exportFiles ? { files: exportFiles } : {}),
          ...(exportEncoder ? { encoder: exportEncoder } : {}),
          ...(deps.tiles ? { tiles: deps.tiles.tiles } : {}),
          ...(deps.readApi.maxArchiveTiles ? { maxArchiveTiles: deps.readApi.maxArchiveTiles } : {}),
          ...(deps.readApi.exportJobs ? { background: deps.readApi.exportJobs } : {}),
        });
      if (deps.readApi.exportJobs)
        await app.register(exportJobRoutes, { background: deps.readApi.exportJobs });
    },
  };
}
