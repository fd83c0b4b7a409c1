import path from 'node:path';
import { resolveSessionSecret } from '../adapters/config/environment.ts';
import { localExportArchive } from '../adapters/files/export-archive.ts';
import {
  type AccountsDeps,
  accountsHttp,
  apiKeysHttp,
  dataExportsHttp,
  quotasHttp,
} from '../adapters/http/accounts/account-hooks.ts';
import type { HttpFeature } from '../adapters/http/http-feature.ts';
import { pgBossDataExportQueue, startDataExportWorker } from '../adapters/jobs/data-export-jobs.ts';
import { accountPage } from '../adapters/pages/accounts/account-page.ts';
import { registerPage } from '../adapters/pages/accounts/register-page.ts';
import { dashboardRoutes } from '../adapters/pages/site/dashboard.ts';
import {
  postgresDataExportStore,
  postgresUserDataReader,
} from '../adapters/postgres/accounts/data-export-store.ts';
import { postgresQuotas } from '../adapters/postgres/accounts/quotas.ts';
import { postgresApiKeyStore } from '../adapters/postgres/accounts/api-key-store.ts';
import { sha256ApiKeySecrets } from '../adapters/security/api-key-secrets.ts';
import type { ApiKeyDeps } from '../application/accounts/api-keys.ts';
import { apiKeysPage } from '../adapters/pages/accounts/api-keys-page.ts';
import { datasetSettingsPage } from '../adapters/pages/accounts/dataset-settings-page.ts';
import { postgresRateLimitCounter } from '../adapters/postgres/accounts/rate-limit-counter.ts';
import { postgresSessionStore } from '../adapters/postgres/accounts/session-store.ts';
import { postgresUserStore } from '../adapters/postgres/accounts/user-store.ts';
import type { DatabasePool } from '../adapters/postgres/database.ts';
import { hmacTokenSigner } from '../adapters/security/hmac-token-signer.ts';
import { scryptPasswordHasher } from '../adapters/security/scrypt-password-hasher.ts';
import { type DataExportDeps, removeExpiredExports } from '../application/accounts/export-own-data.ts';
import type { SiteNoticeDeps } from '../application/site/site-notices.ts';
import type { CollectionRepository } from '../ports/collections/collection-repository.ts';
import type { FeatureFlagStore } from '../ports/site/feature-flag-store.ts';
import type { FeatureWorkers, Infrastructure } from './infrastructure.ts';

// Accounts, sessions, quotas, rate limits and the own-data exports, all kept in Postgres; the
// accounts HTTP area (its hooks, the auth, collection, quota and feature-flag routes) and the
// pages built on it: the admin dashboard, the registration page and the account page.

export function composeAccounts(
  infra: Pick<Infrastructure, 'config' | 'boss' | 'clock' | 'policy'>,
  on: DatabasePool,
  needs: {
    repository: CollectionRepository;
    flags: FeatureFlagStore;
    /** The legal notices the registration page shows. */
    notices: Pick<SiteNoticeDeps, 'settings'>;
  },
) {
  const { config, clock, policy } = infra;
  const users = postgresUserStore(on);
  const sessions = postgresSessionStore(on);
  const passwords = scryptPasswordHasher();
  const rateLimits = postgresRateLimitCounter(on);
  // The one Quotas seam over the access policy: every feature counts against the same limits.
  const quotas = postgresQuotas(on, policy, clock);
  const apiKeys: ApiKeyDeps = {
    keys: postgresApiKeyStore(on),
    secrets: sha256ApiKeySecrets(),
    clock,
    recentUse: new Map(),
  };
  const dataExports: DataExportDeps = {
    exports: postgresDataExportStore(on),
    queue: pgBossDataExportQueue(infra.boss),
    reader: postgresUserDataReader(on),
    archive: localExportArchive(path.join(config.dataDir, 'exports')),
    clock,
  };
  // Only a process that serves HTTP needs the session secret (and, in production, must have one).
  let area: AccountsDeps | undefined;
  const httpDeps = (): AccountsDeps => {
    if (area) return area;
    const secret = resolveSessionSecret(config);
    area = {
      login: { users, sessions, passwords, tokens: hmacTokenSigner(secret), rateLimits, policy, clock },
      account: { users, sessions, passwords, rateLimits, policy, clock },
      flags: needs.flags,
      quotas,
      apiKeys,
      collections: {
        repository: needs.repository,
        passwords,
        sessions,
        quotas,
        defaultTrustLevel: policy.defaultTrustLevel,
      },
      csrfSecret: secret,
    };
    return area;
  };
  return {
    quotas,
    dataExports,
    /** What the accounts HTTP area and the pages of every feature need: who is calling, CSRF. */
    httpDeps,
    http: (): HttpFeature => {
      const deps = httpDeps();
      const { login, collections, flags, csrfSecret } = deps;
      return {
        ...accountsHttp(deps),
        pages: async (app) => {
          await app.register(dashboardRoutes, { login, collections, flags, quotas, csrfSecret });
          await app.register(registerPage, { login, flags, notices: needs.notices, csrfSecret });
          await app.register(accountPage, { exports: dataExports, quotas, csrfSecret });
          await app.register(apiKeysPage, { apiKeys, csrfSecret });
          await app.register(datasetSettingsPage, { collections, csrfSecret });
        },
      };
    },
    /** GET /api/quotas (placed by src/compose.ts). */
    quotasHttp: (): HttpFeature => quotasHttp({ quotas, clock }),
    /** The API key routes (placed by src/compose.ts). */
    apiKeysHttp: (): HttpFeature => apiKeysHttp({ apiKeys }),
    /** The data-export routes (placed by src/compose.ts). */
    dataExportsHttp: (): HttpFeature => dataExportsHttp({ exports: dataExports }),
    workers: (): FeatureWorkers => ({
      start: async () => {
        await startDataExportWorker(infra.boss, dataExports);
      },
      periodicTasks: [{ name: 'expired data exports', run: () => removeExpiredExports(dataExports) }],
    }),
  };
}
