import type { FastifyInstance } from 'fastify';

// What one feature adds to the HTTP app. The composition modules (src/composition/) build one per
// feature and buildHttpApp registers them without knowing which features exist: the HTTP app
// imports no feature's routes, and the server pages (which the HTTP adapter may not import) come
// in the same way.

export type HttpFeature = {
  /**
   * Hooks that every route of every feature sees (who is calling, rate limits): installed before
   * any feature's routes.
   */
  hooks?: (app: FastifyInstance) => Promise<void>;
  /**
   * The feature's API routes, registered on the root instance. The features' order is the
   * OpenAPI document's order of paths, so a feature keeps its routes in the order they are listed.
   */
  routes?: (app: FastifyInstance) => Promise<void>;
  /** Server-rendered pages, mounted after every feature's routes (they rely on the hooks above). */
  pages?: (app: FastifyInstance) => Promise<void>;
};
