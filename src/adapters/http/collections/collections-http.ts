import type { CollectionDeps } from '../../../application/collections/collection-documents.ts';
import type { HttpFeature } from '../http-feature.ts';
import { collectionRoutes } from './collection-routes.ts';
import { collectionSchemas } from './collection-schemas.ts';

// The collection endpoints (users, catalogs, datasets, events in Payload CMS's REST shape) as one
// feature of the HTTP app. Their access rules are the accounts' (who is calling comes from the
// accounts hooks), so the composition root lists them after the accounts' routes.

export function collectionsHttp(deps: CollectionDeps): HttpFeature {
  return {
    hooks: async (app) => {
      for (const schema of collectionSchemas) app.addSchema(schema);
    },
    routes: async (app) => {
      await app.register(collectionRoutes, deps);
    },
  };
}
