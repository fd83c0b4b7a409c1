import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import type { CollectionDeps } from '../../../application/collections/collection-documents.ts';
import type { DataExportDeps } from '../../../application/accounts/export-own-data.ts';
import type { Clock } from '../../../ports/clock.ts';
import type { LoginDeps } from '../../../application/accounts/log-in.ts';
import type { AccountDeps } from '../../../application/accounts/manage-account.ts';
import type { FeatureFlagStore } from '../../../ports/site/feature-flag-store.ts';
import type { Quotas } from '../../../ports/accounts/quotas.ts';
import { installAuthentication } from '../authentication.ts';
import type { ApiKeyDeps } from '../../../application/accounts/api-keys.ts';
import { apiKeyRoutes } from './api-key-routes.ts';
import type { HttpFeature } from '../http-feature.ts';
import { installRateLimits } from '../rate-limit.ts';
import { installConcurrencyLimits } from '../concurrency-limit.ts';
import { authRoutes } from './auth-routes.ts';
import { authSchemas } from './auth-schemas.ts';
import { dataExportRoutes } from './data-export-routes.ts';
import { quotaRoutes } from './quota-routes.ts';
import { UserSchema } from '../schemas.ts';

// Accounts, access control, quotas and rate limits as one HTTP area: the cross-cutting hooks
// (who is calling, how often, how many costly requests at once) on the root instance, then the
// auth routes. The quota and data-export routes are features of their own that the composition
// root places among the other features' routes (src/compose.ts keeps the OpenAPI document's
// order). The dashboard pages are the pages adapter's, mounted by src/composition/accounts.ts.

export type AccountsDeps = {
  login: LoginDeps;
  account: AccountDeps;
  flags: FeatureFlagStore;
  /** The collection endpoints' use cases (their own feature, collectionsHttp), with the dashboard's. */
  collections: CollectionDeps;
  quotas: Quotas;
  apiKeys: ApiKeyDeps;
  /** Keys the server pages' CSRF tokens (derived from SESSION_SECRET; pages/csrf.ts). */
  csrfSecret: string;
};

/** The accounts area as one feature of the HTTP app: its hooks come before every feature's routes. */
export function accountsHttp(deps: AccountsDeps): HttpFeature {
  return {
    hooks: (app) => installAccountHooks(app, deps),
    routes: (app) => registerAccountRoutes(app, deps),
  };
}

/** Hooks that every route sees; installed before any route plugin. */
async function installAccountHooks(app: FastifyInstance, deps: AccountsDeps): Promise<void> {
  await app.register(cookie);
  app.addSchema(UserSchema);
  for (const schema of authSchemas) app.addSchema(schema);
  installAuthentication(app, { ...deps.login, apiKeys: deps.apiKeys });
  installRateLimits(app, {
    counter: deps.login.rateLimits,
    policy: deps.login.policy,
    clock: deps.login.clock,
  });
  // After the rate limits: a request they refuse takes no place.
  installConcurrencyLimits(app, { policy: deps.login.policy.concurrency, clock: deps.login.clock });
}

async function registerAccountRoutes(app: FastifyInstance, deps: AccountsDeps): Promise<void> {
  await app.register(authRoutes, {
    login: deps.login,
    account: deps.account,
    flags: deps.flags,
    defaultTrustLevel: deps.login.policy.defaultTrustLevel,
  });
}

/** The caller's API keys: create, list, revoke (placed by src/compose.ts). */
export function apiKeysHttp(deps: { apiKeys: ApiKeyDeps }): HttpFeature {
  return { routes: async (app) => void (await app.register(apiKeyRoutes, deps)) };
}

/** GET /api/quotas: the caller's quotas and what is left of them. */
export function quotasHttp(deps: { quotas: Quotas; clock: Clock }): HttpFeature {
  return { routes: async (app) => void (await app.register(quotaRoutes, deps)) };
}

/** The caller's data exports: request one, see it, download it. */
export function dataExportsHttp(deps: { exports: DataExportDeps }): HttpFeature {
  return { routes: async (app) => void (await app.register(dataExportRoutes, deps)) };
}
