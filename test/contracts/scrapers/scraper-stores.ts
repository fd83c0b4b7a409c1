import type { Test } from 'tap';
import { NEW_SCRAPER } from '../../fakes/scrapers/scraper-stores.ts';
import { scraperRunsContract } from './scraper-runs.ts';
import {
  declared,
  isIso,
  type MakeScraperStores,
  outcome,
  queue,
  queued,
  readsBack,
  repoWith,
  uniqueSlug,
} from './scraper-store-harness.ts';

// What every implementation of the three scraper store ports does, as one suite: run against the
// in-memory fake (test/unit/fakes/scrapers/scraper-stores.test.ts) and against the Postgres adapters
// (test/integration/scrapers/scraper-stores-contract.test.ts). The ports share state (a repo's
// scrapers, a scraper's runs and statistics), so they are tested together. Each case makes its
// own repos and scrapers and looks only at those: the Postgres harness keeps one database.

export function scraperStoresContract(t: Test, make: MakeScraperStores): void {
  t.test('a new repo is pending, with only the fields of its source', async (t) => {
    const h = await make();
    const owner = await h.user();
    const catalog = await h.catalog();
    const slug = uniqueSlug('git');
    const repo = await h.repos.create({
      name: 'Git repo',
      slug,
      catalogId: catalog,
      createdBy: owner,
      sourceType: 'git',
      gitUrl: 'https://example.org/r.git',
      gitBranch: 'main',
    });
    t.match(repo, {
      name: 'Git repo',
      slug,
      sourceType: 'git',
      gitUrl: 'https://example.org/r.git',
      gitBranch: 'main',
      code: null,
      catalogId: catalog,
      createdBy: owner,
      syncStatus: 'pending',
      lastSyncAt: null,
      lastSyncError: null,
    });
    await readsBack(t, repo, h.repos.get);
  });

  t.test('a taken repo slug is a conflict, and nothing is stored', async (t) => {
    const h = await make();
    const owner = await h.user();
    const slug = uniqueSlug('taken');
    const repo = { name: 'R', slug, catalogId: null, createdBy: owner, sourceType: 'upload' as const };
    const first = await h.repos.create({ ...repo, code: { 'a.py': '1' } });
    await t.rejects(h.repos.create({ ...repo, code: { 'b.py': '2' } }), {
      kind: 'conflict',
      code: 'DUPLICATE',
    });
    t.same((await h.repos.get(first.id))?.code, { 'a.py': '1' });
  });

  t.test('updateSource replaces the source; only a resync marks the repo pending', async (t) => {
    const h = await make();
    const { repo } = await repoWith(h, []);
    await h.repos.setSyncStatus(repo.id, 'synced');
    const git = { sourceType: 'git' as const, gitUrl: 'https://example.org/x.git', gitBranch: 'dev' };
    const kept = await h.repos.updateSource(repo.id, git, false);
    t.match(kept, { ...git, code: null, syncStatus: 'synced' });
    t.same(await h.repos.get(repo.id), kept);
    const upload = { sourceType: 'upload' as const, code: { 'n.py': 'new' } };
    const pending = await h.repos.updateSource(repo.id, upload, true);
    t.match(pending, { sourceType: 'upload', gitUrl: null, gitBranch: null, syncStatus: 'pending' });
    t.same(pending.code, { 'n.py': 'new' });
  });

  t.test('sync status: a finished sync records its time and error, a started one keeps them', async (t) => {
    const h = await make();
    const { repo } = await repoWith(h, []);
    await h.repos.setSyncStatus(repo.id, 'failed', 'no manifest');
    const failed = await h.repos.get(repo.id);
    t.match(failed, { syncStatus: 'failed', lastSyncError: 'no manifest' });
    t.ok(isIso(failed?.lastSyncAt), 'the time of the failed sync');
    await h.repos.requestSync(repo.id);
    t.match(await h.repos.get(repo.id), { syncStatus: 'pending', lastSyncError: 'no manifest' });
    await h.repos.setSyncStatus(repo.id, 'syncing');
    t.match(await h.repos.get(repo.id), {
      syncStatus: 'syncing',
      lastSyncError: 'no manifest',
      lastSyncAt: failed?.lastSyncAt,
    });
    await h.repos.setSyncStatus(repo.id, 'synced');
    const synced = await h.repos.get(repo.id);
    t.match(synced, { syncStatus: 'synced', lastSyncError: null });
    t.ok(isIso(synced?.lastSyncAt));
  });

  t.test(
    'removeUnlessRunning: missing, refused while a scraper runs, else deletes scrapers and runs',
    async (t) => {
      const h = await make();
      t.equal(await h.repos.removeUnlessRunning(1_000_000_000), 'missing');
      const { repo, scrapers } = await repoWith(h, [declared('a'), declared('b')]);
      const [a, b] = scrapers;
      if (!a || !b) throw new Error('two scrapers');
      const waiting = await queued(h, a.id);
      const active = await queued(h, b.id);
      await h.runs.start(active.id);
      t.equal(await h.repos.removeUnlessRunning(repo.id), 'running');
      t.ok(await h.repos.get(repo.id), 'nothing deleted');
      t.equal((await h.scrapers.listByRepo(repo.id)).length, 2);
      await h.runs.finish(active.id, 'running', outcome('success'));
      t.equal(await h.repos.removeUnlessRunning(repo.id), 'deleted', 'a queued run does not hold it');
      t.equal(await h.repos.get(repo.id), null);
      t.same(await h.scrapers.listByRepo(repo.id), []);
      t.equal(await h.scrapers.get(a.id), null);
      t.equal(await h.runs.get(waiting.id), null, 'the runs went with their scrapers');
      t.equal(await h.runs.get(active.id), null);
      t.equal(await h.repos.removeUnlessRunning(repo.id), 'missing');
    },
  );

  t.test("reconcile creates scrapers with the record's defaults, listed by slug", async (t) => {
    const h = await make();
    const { repo } = await repoWith(h, []);
    const result = await h.scrapers.reconcile(repo.id, [
      declared('zeta', { schedule: '0 * * * *' }),
      declared('alpha'),
    ]);
    t.same(result, { created: ['zeta', 'alpha'], updated: [], deleted: [], keptWhileRunning: [] });
    const list = await h.scrapers.listByRepo(repo.id);
    t.same(
      list.map((s) => s.slug),
      ['alpha', 'zeta'],
    );
    const zeta = list[1];
    t.match(zeta, {
      ...declared('zeta', { schedule: '0 * * * *' }),
      repoId: repo.id,
      ...NEW_SCRAPER,
    });
    t.ok(isIso(zeta?.scheduleSince));
    await readsBack(t, zeta, h.scrapers.get);
  });

  t.test("reconcile updates the manifest's fields by slug and keeps the user's settings", async (t) => {
    const h = await make();
    const { repo, scrapers } = await repoWith(h, [
      declared('keep', { schedule: '0 * * * *' }),
      declared('move'),
    ]);
    const [keep, move] = scrapers;
    if (!keep || !move) throw new Error('two scrapers');
    const dataset = await h.dataset();
    await h.scrapers.update(keep.id, { enabled: false, envVars: { K: 'v' }, targetDatasetId: dataset });
    const result = await h.scrapers.reconcile(repo.id, [
      declared('keep', { schedule: '0 * * * *', name: 'Renamed', entrypoint: 'run.py', timeoutSecs: 90 }),
      declared('move', { schedule: '*/5 * * * *', runtime: 'node', memoryMb: 256, outputFile: 'o.csv' }),
    ]);
    t.same(result, { created: [], updated: ['keep', 'move'], deleted: [], keptWhileRunning: [] });
    const kept = await h.scrapers.get(keep.id);
    t.match(kept, {
      name: 'Renamed',
      entrypoint: 'run.py',
      timeoutSecs: 90,
      enabled: false,
      envVars: { K: 'v' },
      targetDatasetId: dataset,
    });
    t.equal(kept?.scheduleSince, keep.scheduleSince, 'the same schedule keeps its start');
    const moved = await h.scrapers.get(move.id);
    t.match(moved, { schedule: '*/5 * * * *', runtime: 'node', memoryMb: 256, outputFile: 'o.csv' });
    t.ok(
      new Date(moved?.scheduleSince ?? 0) >= new Date(move.scheduleSince),
      'a new schedule starts when it was reconciled',
    );
  });

  t.test(
    'reconcile deletes undeclared scrapers with their runs, and keeps a running one unscheduled',
    async (t) => {
      const h = await make();
      const { repo, scrapers } = await repoWith(h, [
        declared('idle'),
        declared('busy', { schedule: '0 * * * *' }),
        declared('stays'),
      ]);
      const [busy, idle] = scrapers;
      if (!busy || !idle) throw new Error('scrapers');
      const idleRun = await queued(h, idle.id);
      const busyRun = await queued(h, busy.id);
      await h.runs.start(busyRun.id);
      const result = await h.scrapers.reconcile(repo.id, [declared('stays')]);
      t.same(result, { created: [], updated: ['stays'], deleted: ['idle'], keptWhileRunning: ['busy'] });
      t.equal(await h.scrapers.get(idle.id), null);
      t.equal(await h.runs.get(idleRun.id), null, "the deleted scraper's runs are gone");
      t.match(await h.scrapers.get(busy.id), { slug: 'busy', schedule: null }, 'never scheduled again');
      t.ok(await h.runs.get(busyRun.id), 'its run goes on');

      await h.runs.finish(busyRun.id, 'running', outcome('success'));
      const later = await h.scrapers.reconcile(repo.id, [declared('stays')]);
      t.same(later, { created: [], updated: ['stays'], deleted: ['busy'], keptWhileRunning: [] });
      t.same(
        (await h.scrapers.listByRepo(repo.id)).map((s) => s.slug),
        ['stays'],
      );
    },
  );

  t.test(
    'listSchedulable: enabled, scheduled, with no run queued or running; its last due time',
    async (t) => {
      const h = await make();
      const hourly = { schedule: '0 * * * *' };
      const { scrapers } = await repoWith(h, [
        declared('a-due', hourly),
        declared('b-off', hourly),
        declared('c-none'),
        declared('d-queued', hourly),
        declared('e-running', hourly),
      ]);
      const [due, off, , queued, running] = scrapers;
      if (!due || !off || !queued || !running) throw new Error('scrapers');
      await h.scrapers.update(off.id, { enabled: false });
      const scheduled = (scraperId: number, due: string) => queue(h, scraperId, { due });
      const first = await scheduled(due.id, '2026-01-01T10:00:00.000Z');
      const second = await scheduled(due.id, '2026-01-01T11:00:00.000Z');
      if (!first || !second) throw new Error('runs');
      for (const run of [second, first]) {
        await h.runs.start(run.id);
        await h.runs.finish(run.id, 'running', outcome('success'));
      }
      await scheduled(queued.id, '2026-01-01T10:00:00.000Z');
      const active = await scheduled(running.id, '2026-01-01T10:00:00.000Z');
      await h.runs.start(active?.id ?? 0);
      const mine = new Set(scrapers.map((s) => s.id));
      const listed = (await h.scrapers.listSchedulable()).filter((s) => mine.has(s.id));
      t.same(
        listed.map((s) => s.slug),
        ['a-due'],
      );
      t.equal(
        listed[0]?.lastScheduledFor,
        '2026-01-01T11:00:00.000Z',
        'the latest due time, not the last run',
      );
      t.match(listed[0], { id: due.id, schedule: '0 * * * *', statistics: { totalRuns: 2 } });

      await h.scrapers.update(off.id, { enabled: true });
      const again = (await h.scrapers.listSchedulable()).filter((s) => mine.has(s.id));
      t.same(
        again.map((s) => [s.slug, s.lastScheduledFor]),
        [
          ['a-due', '2026-01-01T11:00:00.000Z'],
          ['b-off', null],
        ],
        'ordered by id; a scraper never scheduled has no due time',
      );
    },
  );

  t.test("a webhook's token hash finds its scraper until the webhook is turned off", async (t) => {
    const h = await make();
    const { scrapers } = await repoWith(h, [declared('hook'), declared('other')]);
    const [hook] = scrapers;
    if (!hook) throw new Error('scraper');
    const hash = 'ab'.repeat(32);
    t.equal(await h.scrapers.findByWebhookHash(hash), null);
    await h.scrapers.setWebhook(hook.id, true, hash);
    t.match(await h.scrapers.findByWebhookHash(hash), { id: hook.id, webhookEnabled: true });
    t.match(await h.scrapers.get(hook.id), { webhookEnabled: true });
    const rotated = 'cd'.repeat(32);
    await h.scrapers.setWebhook(hook.id, true, rotated);
    t.equal(await h.scrapers.findByWebhookHash(hash), null, 'the old token is unknown');
    t.match(await h.scrapers.findByWebhookHash(rotated), { id: hook.id });
    await h.scrapers.setWebhook(hook.id, false, null);
    t.equal(await h.scrapers.findByWebhookHash(rotated), null);
    t.match(await h.scrapers.get(hook.id), { webhookEnabled: false });
  });

  t.test('update changes only the settings it is given', async (t) => {
    const h = await make();
    const { scrapers } = await repoWith(h, [declared('s', { schedule: '0 * * * *' })]);
    const [before] = scrapers;
    if (!before) throw new Error('scraper');
    const dataset = await h.dataset();
    await h.scrapers.update(before.id, { autoImport: true, targetDatasetId: dataset });
    await h.scrapers.update(before.id, { reviewDuplicates: 'never', envVars: { A: '1', B: '2' } });
    await h.scrapers.update(before.id, {});
    t.same(await h.scrapers.get(before.id), {
      ...before,
      autoImport: true,
      targetDatasetId: dataset,
      reviewDuplicates: 'never',
      envVars: { A: '1', B: '2' },
    });
    await h.scrapers.update(before.id, { targetDatasetId: null, enabled: false });
    t.match(await h.scrapers.get(before.id), { targetDatasetId: null, enabled: false, autoImport: true });
  });

  scraperRunsContract(t, make);
}
