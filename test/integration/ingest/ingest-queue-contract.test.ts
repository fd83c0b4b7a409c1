import t from 'tap';
import { Type } from 'typebox';
import { pgBossIngestQueue } from '../../../src/adapters/jobs/ingest-worker.ts';
import { INGEST_PROCESS_QUEUE, startJobQueue } from '../../../src/adapters/jobs/job-queue.ts';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { ingestQueueContract } from '../../contracts/ingest/ingest-queue.ts';
import { testDatabase } from '../../helpers/database.ts';

// pgBossIngestQueue passes the IngestQueue port's behaviour suite, the one the in-memory fake passes
// (test/unit/fakes/ingest/ingest-queue.test.ts). No worker runs here, so a queued run stays in
// pg-boss's job table, where each case reads it; each case empties the queue first.
const db = await testDatabase(t);
const boss = await startJobQueue(db.url, 'migrate', () => {});
t.teardown(() => boss.stop({ graceful: false, timeout: 2_000 }));

const WaitingRow = row(Type.Object({ jobId: Type.Number(), startAfter: Type.String() }));

ingestQueueContract(t, async () => {
  await db.pool.query(sql.unsafe`delete from pgboss.job where name = ${INGEST_PROCESS_QUEUE}`);
  return {
    queue: pgBossIngestQueue(boss),
    async waiting() {
      const rows = await db.pool.any(sql.type(WaitingRow)`
        select (data->>'ingestJobId')::int as "jobId", to_json(start_after)#>>'{}' as "startAfter"
        from pgboss.job where name = ${INGEST_PROCESS_QUEUE} and state = 'created'
        order by created_on`);
      return rows.map((r) => ({ jobId: r.jobId, startAfter: new Date(r.startAfter) }));
    },
  };
});
