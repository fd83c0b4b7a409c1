import t from 'tap';
import { createScraperRepo } from '../../../../src/application/scrapers/create-scraper-repo.ts';
import { fakeQuotas } from '../../../helpers/quotas.ts';
import { OWNER, scraperUseCaseDeps } from './scraper-use-case-fakes.ts';

// Creating a scraper repo on the shared in-memory stores: the flag, scraper access, the input's
// checks, the repos quota (given back when the repo is not stored) and the first sync.

const UPLOAD = { name: 'My repo', slug: 'my-repo', sourceType: 'upload', code: { 'main.py': 'print(1)' } };
const REPOS = [{ quota: 'scraperRepos', amount: 1 }];

t.test("a new repo is stored pending, takes one of the owner's repos, and its sync is queued", async (t) => {
  const deps = scraperUseCaseDeps();
  const repo = await createScraperRepo(deps, OWNER, UPLOAD);
  t.match(repo, {
    name: 'My repo',
    slug: 'my-repo',
    sourceType: 'upload',
    createdBy: OWNER.id,
    syncStatus: 'pending',
  });
  t.same(await deps.repos.get(repo.id), repo);
  t.same(deps.quotas.taken, REPOS);
  t.same(deps.jobs.syncs, [repo.id]);
});

t.test('a git source keeps its URL and defaults the branch to main', async (t) => {
  const deps = scraperUseCaseDeps();
  const repo = await createScraperRepo(deps, OWNER, {
    name: 'Git',
    slug: 'git',
    sourceType: 'git',
    gitUrl: 'https://example.org/scrapers.git',
  });
  t.match(repo, {
    sourceType: 'git',
    gitUrl: 'https://example.org/scrapers.git',
    gitBranch: 'main',
    code: null,
  });
});

t.test('a taken slug is a conflict, and the quota taken for it is given back', async (t) => {
  const deps = scraperUseCaseDeps();
  const first = await createScraperRepo(deps, OWNER, UPLOAD);
  await t.rejects(createScraperRepo(deps, OWNER, UPLOAD), { kind: 'conflict', code: 'DUPLICATE' });
  t.same(deps.quotas.given, REPOS);
  t.same(deps.jobs.syncs, [first.id], 'no second sync');
});

t.test('path traversal in uploaded code is refused before any quota is taken', async (t) => {
  const deps = scraperUseCaseDeps();
  await t.rejects(createScraperRepo(deps, OWNER, { ...UPLOAD, code: { '../etc/passwd': 'x' } }), {
    kind: 'validation',
    code: 'INVALID_PATH',
  });
  t.same(deps.quotas.taken, []);
  t.same(deps.jobs.syncs, []);
});

t.test('a spent repos quota, a low trust level and the flag off each refuse the repo', async (t) => {
  const refusing = { ...scraperUseCaseDeps(), quotas: fakeQuotas({ refuse: 'scraperRepos' }) };
  await t.rejects(createScraperRepo(refusing, OWNER, UPLOAD), {
    kind: 'quota_exceeded',
    code: 'SCRAPER_REPOS_QUOTA_EXCEEDED',
  });
  t.equal(await refusing.repos.get(1), null);
  const deps = scraperUseCaseDeps();
  await t.rejects(createScraperRepo(deps, { ...OWNER, trustLevel: 2 }, UPLOAD), {
    code: 'TRUST_LEVEL_TOO_LOW',
  });
  const off = scraperUseCaseDeps({ enableScrapers: false });
  await t.rejects(createScraperRepo(off, OWNER, UPLOAD), { code: 'SCRAPERS_DISABLED' });
  t.same([...deps.jobs.syncs, ...off.jobs.syncs, ...refusing.jobs.syncs], []);
  t.same([...deps.quotas.taken, ...off.quotas.taken], []);
});
