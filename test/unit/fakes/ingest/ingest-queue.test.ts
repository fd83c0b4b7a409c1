import t from 'tap';
import { ingestQueueContract } from '../../../contracts/ingest/ingest-queue.ts';
import { memoryIngestQueue } from '../../../fakes/ingest/ingest-queue.ts';

// The in-memory IngestQueue passes the port's behaviour suite (pgBossIngestQueue passes the same one
// in test/integration/ingest/ingest-queue-contract.test.ts).
ingestQueueContract(t, async () => {
  const queue = memoryIngestQueue();
  return { queue, waiting: () => queue.waiting() };
});
