import type { Test } from 'tap';
import t from 'tap';
import { localExportFileStore } from '../../../src/adapters/files/export-file-store.ts';
import { postgresEventExporter } from '../../../src/adapters/postgres/read/export.ts';
import { exportEvents } from '../../../src/application/read/export-events.ts';
import type { EventExporter } from '../../../src/ports/read/event-exporter.ts';
import type { ExportFileStore } from '../../../src/ports/read/export-files.ts';
import { testDatabase } from '../../helpers/database.ts';
import { loadReadFixture } from '../../helpers/v1-fixture.ts';

// Issue 37 §3: one export per key at a time (application/read/export-events.ts#keptOrClaimed). A
// download of a view whose fresh export is still being written (its file is committed after the
// answer's last byte) waits for that file and reads it instead of exporting the same bytes again;
// when the first export keeps nothing, the waiter exports itself. The first export is held by the
// test (its batches are not read until the second request is waiting), so nothing depends on timing:
// "waiting" is observed as the second request having looked the file up, found none, and not
// started an export of its own, after every pending callback of that turn has run.

async function setUp(t: Test) {
  const db = await testDatabase(t);
  await loadReadFixture(db.pool);
  const exporter = postgresEventExporter(db.pool);
  const exports = { count: 0 };
  const counting: EventExporter = {
    versionOf: (viewer, filter) => exporter.versionOf(viewer, filter),
    exportEvents(...args) {
      exports.count += 1;
      return exporter.exportEvents(...args);
    },
  };
  const store = localExportFileStore({ directory: t.testdir(), maxBytes: 10_000_000 });
  const lookups = { misses: 0, missed: () => {} };
  const files: ExportFileStore = {
    ...store,
    async find(key) {
      const file = await store.find(key);
      if (!file) {
        lookups.misses += 1;
        lookups.missed();
      }
      return file;
    },
  };
  return { deps: { exporter: counting, files }, exports, lookups };
}

/** Resolves once `files.find` has missed `count` times in all and the turn that followed has run. */
function afterMisses(lookups: { misses: number; missed: () => void }, count: number): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (lookups.misses < count) return;
      lookups.missed = () => {};
      setImmediate(resolve);
    };
    lookups.missed = check;
    check();
  });
}

t.test('a download while the same view is exported waits for its file and reads it', async (t) => {
  const { deps, exports, lookups } = await setUp(t);
  const first = await exportEvents(deps, null, { catalog: 'news' }, 'geojson');
  if (first.kind !== 'stream' || !first.keep) throw new Error('expected a fresh export with a file');
  t.equal(exports.count, 1);

  let secondDone = false;
  const second = exportEvents(deps, null, { catalog: 'news' }, 'geojson').then((answer) => {
    secondDone = true;
    return answer;
  });
  await afterMisses(lookups, 2);
  t.equal(exports.count, 1, 'the second request started no export of its own');
  t.notOk(secondDone, 'the second request waits while the first export is written');

  // The first export written and kept, as the route's pump does.
  await first.keep.write(first.text.head);
  let started = false;
  for await (const batch of first.text.batches) {
    if (started) await first.keep.write(first.text.separator);
    await first.keep.write(batch);
    started = true;
  }
  await first.keep.write(first.text.tail);
  const file = await first.keep.commit();

  const answer = await second;
  t.equal(answer.kind, 'file', 'the second request reads the kept file');
  if (answer.kind === 'file') t.equal(answer.file.path, file.path);
  t.equal(answer.version, first.version);
  t.equal(exports.count, 1, 'the view was exported once');

  // Another view is not held up by this one's claim.
  const other = await exportEvents(deps, null, { catalog: 'news' }, 'csv');
  t.equal(other.kind, 'stream');
  if (other.kind === 'stream') await other.keep?.abort();
});

t.test('when the export in flight keeps nothing, the waiting download exports itself', async (t) => {
  const { deps, exports, lookups } = await setUp(t);
  const first = await exportEvents(deps, null, {}, 'csv');
  if (first.kind !== 'stream' || !first.keep) throw new Error('expected a fresh export with a file');
  const second = exportEvents(deps, null, {}, 'csv');
  await afterMisses(lookups, 2);
  t.equal(exports.count, 1, 'the second request waits');

  // The first client left: its export stops and its file is dropped.
  await first.text.batches[Symbol.asyncIterator]().return?.();
  await first.keep.abort();

  const answer = await second;
  t.equal(answer.kind, 'stream', 'a fresh export');
  t.equal(exports.count, 2);
  if (answer.kind === 'stream') {
    await answer.text.batches[Symbol.asyncIterator]().return?.();
    await answer.keep?.abort();
  }
  // The claim is gone with the export: a third request exports at once.
  const third = await exportEvents(deps, null, {}, 'csv');
  t.equal(third.kind, 'stream');
  t.equal(exports.count, 3);
  if (third.kind === 'stream') {
    await third.text.batches[Symbol.asyncIterator]().return?.();
    await third.keep?.abort();
  }
});
