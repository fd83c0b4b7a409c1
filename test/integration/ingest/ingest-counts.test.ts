import t, { type Test } from 'tap';
import { Type } from 'typebox';
import type { DatabasePool } from '../../../src/adapters/postgres/database.ts';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import {
  countEvents,
  ingestApp,
  type UploadedDoc,
  upload,
  waitForFile,
} from '../../fixtures/ingest/client.ts';
import { assertCountTablesExact } from '../../helpers/count-tables.ts';

// The precomputed counts (event_counts, event_cell_counts, kept by the statement-level triggers of
// migration 0200, and those of 0210 and 0235) must equal a recount from `events` after imports in several batches, with
// duplicates inside a file, rows without coordinates, and a second import that updates events
// (moving them to other periods and cells) and adds new ones.

async function assertCountsExact(t: Test, pool: DatabasePool, when: string) {
  const counted = await pool.oneFirst(
    sql.type(row(Type.Object({ n: Type.Number() })))`select count(*)::int as n from event_counts`,
  );
  t.ok(counted > 0, `${when}: there are counts to compare`);
  await assertCountTablesExact(t, pool, when);
}

function csv(rows: { id: string; time: string; lat: string; lon: string }[]): string {
  return [
    'id,time,latitude,longitude,title',
    ...rows.map((r) => `${r.id},${r.time},${r.lat},${r.lon},event ${r.id}`),
  ].join('\n');
}

t.test('precomputed counts stay exact through batched imports with duplicates and updates', async (t) => {
  const { app, db, catalogId } = await ingestApp(t, { batchSize: 7 });
  const first = Array.from({ length: 60 }, (_, i) => ({
    id: `e${i}`,
    time: new Date(Date.UTC(2023, i % 12, 1 + (i % 27), i % 24)).toISOString(),
    lat: i % 10 === 9 ? '' : String(((i * 7) % 170) - 85),
    lon: i % 10 === 9 ? '' : String(((i * 13) % 350) - 175),
  }));
  // Internal duplicates: the first occurrence wins.
  const withDuplicates = [
    ...first,
    ...first.slice(0, 5).map((r) => ({ ...r, time: '2030-01-01T00:00:00Z' })),
  ];
  const a = (
    (await upload(app, catalogId, { name: 'a.csv', content: csv(withDuplicates) })).json() as {
      doc: UploadedDoc;
    }
  ).doc;
  t.equal((await waitForFile(app, a.id)).status, 'completed');
  const datasetA = a.datasets[0] as number;
  t.equal(await countEvents(db.pool, datasetA), 60);
  await assertCountsExact(t, db.pool, 'after the first import');

  // A second dataset of the same catalog shares the catalog and total rows.
  const b = (
    (await upload(app, catalogId, { name: 'b.csv', content: csv(first.slice(0, 30)) })).json() as {
      doc: UploadedDoc;
    }
  ).doc;
  t.equal((await waitForFile(app, b.id)).status, 'completed');
  await assertCountsExact(t, db.pool, 'after a second dataset');

  // Updates: 20 events move to other years, months and cells (some lose their location), 10 are new.
  const changed = [
    ...first.slice(0, 20).map((r, i) => ({
      ...r,
      time: new Date(Date.UTC(2019 + (i % 3), (i * 5) % 12, 2)).toISOString(),
      lat: i % 4 === 3 ? '' : String(((i * 11) % 160) - 80),
      lon: i % 4 === 3 ? '' : String(((i * 17) % 340) - 170),
    })),
    ...first.slice(20),
    ...Array.from({ length: 10 }, (_, i) => ({
      id: `new${i}`,
      time: new Date(Date.UTC(2024, i, 3)).toISOString(),
      lat: String(i * 3),
      lon: String(i * 4),
    })),
  ];
  const c = (
    (
      await upload(
        app,
        catalogId,
        { name: 'a-again.csv', content: csv(changed) },
        { dataset: String(datasetA), settings: JSON.stringify({ duplicateHandling: 'update' }) },
      )
    ).json() as { doc: UploadedDoc }
  ).doc;
  const progress = await waitForFile(app, c.id);
  t.equal(progress.status, 'completed', JSON.stringify(progress.errorLog));
  t.match(progress.jobs[0]?.results, { created: 10, updated: 20 });
  t.equal(await countEvents(db.pool, datasetA), 70);
  await assertCountsExact(t, db.pool, 'after an import that updates and adds events');
});
