import t from 'tap';
import { postgresCollectionRepository } from '../../../src/adapters/postgres/collections/collection-repository.ts';
import { collectionRepositoryContract } from '../../contracts/collections/collection-repository.ts';
import { testDatabase } from '../../helpers/database.ts';

// postgresCollectionRepository passes the CollectionRepository port's behaviour suite for the
// document collections, the one the in-memory fake passes (test/unit/fakes/collections/
// collection-repository.test.ts). Lists read whole tables, so each case has a database of its own.
collectionRepositoryContract(t, async (test) =>
  postgresCollectionRepository((await testDatabase(test)).pool),
);
