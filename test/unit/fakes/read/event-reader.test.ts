import t from 'tap';
import { eventReaderContract } from '../../../contracts/read/event-reader.ts';
import { inMemoryEventReader } from '../../../fakes/read/event-reader.ts';

// The in-memory read model passes the read model's behaviour suite (the one postgresEventReader
// passes in test/integration/read/event-reader-contract.test.ts).
eventReaderContract(t, async (_t, world) => inMemoryEventReader(world));
