import { type Static, Type } from 'typebox';
import type { CodeMap, ScraperRepo, SyncStatus } from '../../../domain/scrapers/repos.ts';
import type { ScraperRepoStore } from '../../../ports/scrapers/scraper-repo-store.ts';
import { mapConstraintErrors } from '../constraint-errors.ts';
import { type DatabasePool, Nullable, row, sql } from '../database.ts';

const RepoRow = Type.Object({
  id: Type.Number(),
  name: Type.String(),
  slug: Type.String(),
  source_type: Type.Union([Type.Literal('git'), Type.Literal('upload')]),
  git_url: Nullable(Type.String()),
  git_branch: Nullable(Type.String()),
  code: Nullable(Type.Record(Type.String(), Type.String())),
  catalog_id: Nullable(Type.Number()),
  created_by: Nullable(Type.Number()),
  sync_status: Type.Union([
    Type.Literal('pending'),
    Type.Literal('syncing'),
    Type.Literal('synced'),
    Type.Literal('failed'),
  ]),
  last_sync_at: Nullable(Type.String()),
  last_sync_error: Nullable(Type.String()),
});
const Repo = row(RepoRow);
const COLUMNS = sql.fragment`id, name, slug, source_type, git_url, git_branch, code, catalog_id, created_by,
  sync_status, last_sync_at, last_sync_error`;

function toRepo(r: Static<typeof RepoRow>): ScraperRepo {
  return {
    id: r.id,
    name: r.name,
    slug: r.slug,
    sourceType: r.source_type,
    gitUrl: r.git_url,
    gitBranch: r.git_branch,
    code: r.code as CodeMap | null,
    catalogId: r.catalog_id,
    createdBy: r.created_by,
    syncStatus: r.sync_status,
    lastSyncAt: r.last_sync_at,
    lastSyncError: r.last_sync_error,
  };
}

export function postgresScraperRepoStore(pool: DatabasePool): ScraperRepoStore {
  return {
    async create(repo) {
      // A taken slug is the caller's 409, not a 500.
      const created = await mapConstraintErrors(() =>
        pool.one(sql.type(Repo)`
        insert into scraper_repos (name, slug, source_type, git_url, git_branch, code, catalog_id, created_by)
        values (${repo.name}, ${repo.slug}, ${repo.sourceType},
                ${repo.sourceType === 'git' ? repo.gitUrl : null},
                ${repo.sourceType === 'git' ? repo.gitBranch : null},
                ${repo.sourceType === 'upload' ? sql.jsonb(repo.code) : null},
                ${repo.catalogId}, ${repo.createdBy})
        returning ${COLUMNS}`),
      );
      return toRepo(created);
    },

    async get(id) {
      const found = await pool.maybeOne(
        sql.type(Repo)`select ${COLUMNS} from scraper_repos where id = ${id}`,
      );
      return found ? toRepo(found) : null;
    },

    async updateSource(id, source, resync) {
      const updated = await pool.one(sql.type(Repo)`
        update scraper_repos set
          source_type = ${source.sourceType},
          git_url = ${source.sourceType === 'git' ? source.gitUrl : null},
          git_branch = ${source.sourceType === 'git' ? source.gitBranch : null},
          code = ${source.sourceType === 'upload' ? sql.jsonb(source.code) : null},
          sync_status = case when ${resync} then 'pending' else sync_status end,
          sync_requested_at = case when ${resync} then now() else sync_requested_at end,
          updated_at = now()
        where id = ${id}
        returning ${COLUMNS}`);
      return toRepo(updated);
    },

    async requestSync(id) {
      await pool.query(sql.unsafe`
        update scraper_repos set sync_status = 'pending', sync_requested_at = now(), updated_at = now()
        where id = ${id}`);
    },

    async setSyncStatus(id, status: SyncStatus, error = null) {
      const finished = status === 'synced' || status === 'failed';
      await pool.query(sql.unsafe`
        update scraper_repos set
          sync_status = ${status},
          last_sync_at = case when ${finished} then now() else last_sync_at end,
          last_sync_error = case when ${finished} then ${error} else last_sync_error end,
          updated_at = now()
        where id = ${id}`);
    },

    async removeUnlessRunning(id) {
      return pool.transaction(async (tx) => {
        // The repo row lock orders this delete after a sync of the same repo (which locks it too).
        const found = await tx.maybeOne(sql.type(row(Type.Object({ running: Type.Boolean() })))`
          select exists (select 1 from scrapers s join scraper_runs r on r.scraper_id = s.id
                         where s.repo_id = ${id} and r.status = 'running') as running
          from scraper_repos where id = ${id} for update`);
        if (!found) return 'missing';
        if (found.running) return 'running';
        await tx.query(sql.unsafe`delete from scraper_repos where id = ${id}`);
        return 'deleted';
      });
    },
  };
}
