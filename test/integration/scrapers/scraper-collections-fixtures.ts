import type { Test } from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { composeScraperDeps } from '../../helpers/compose.ts';
import { accountsApp } from '../../helpers/accounts.ts';
import { testConfig } from '../../helpers/app.ts';
import { openBoss, pythonRepo } from './scraper-fixtures.ts';

// The callers and helpers of the scraper collection tests (scraper-repo-collections.test.ts:
// repos; scraper-collections.test.ts: scrapers and runs): an admin, a level-3 owner, a level-4
// user, a level-2 user and an anonymous caller, each with an API client.

export const COLLECTIONS = ['scraper-repos', 'scrapers', 'scraper-runs'] as const;
export const TWO_SCRAPERS = `
scrapers:
  - { name: Events, slug: events, entrypoint: main.py, schedule: "0 * * * *" }
  - { name: Venues, slug: venues, entrypoint: main.py }
`;

export const count = (n: unknown) => Number(n);

export async function scraperCollectionsSetup(t: Test) {
  const { app, db, createUser, login, as } = await accountsApp(t);
  const scrapers = composeScraperDeps(testConfig(), db.pool, await openBoss(t, db));
  const admin = await createUser({ role: 'admin', trustLevel: 5 });
  const adminApi = as(await login(admin));
  const trusted = await createUser({ trustLevel: 3 });
  const trustedApi = as(await login(trusted));
  const power = await createUser({ trustLevel: 4 });
  const powerApi = as(await login(power));
  const regularApi = as(await login(await createUser({ trustLevel: 2 })));
  const anonymous = as(null);
  const uploadRepo = (slug: string, code = pythonRepo('print(1)')) => ({
    name: `Repo ${slug}`,
    slug,
    sourceType: 'upload',
    code,
  });
  const syncJobs = async (repoId: number) =>
    count(
      await db.pool.oneFirst(sql.type(row(Type.Object({ n: Type.Number() })))`
        select count(*)::int as n from pgboss.job
        where name = 'scraper-repo-sync-job' and (data->>'repoId')::bigint = ${repoId} and state = 'created'`),
    );
  /** The level-3 owner's repo of two scrapers (events, venues) that both files work with. */
  const createEventsRepo = async () => {
    const created = await trustedApi(
      'POST',
      '/api/scraper-repos',
      uploadRepo('events', pythonRepo('print(1)', TWO_SCRAPERS)),
    );
    t.equal(created.statusCode, 201, created.body);
    return { created, repoId: created.json().doc.id as number };
  };
  return {
    createEventsRepo,
    app,
    db,
    scrapers,
    createUser,
    login,
    as,
    admin,
    adminApi,
    trusted,
    trustedApi,
    power,
    powerApi,
    regularApi,
    anonymous,
    uploadRepo,
    syncJobs,
  };
}
