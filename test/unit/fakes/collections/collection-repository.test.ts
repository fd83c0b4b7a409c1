import t from 'tap';
import { collectionRepositoryContract } from '../../../contracts/collections/collection-repository.ts';
import { memoryCollectionRepository } from '../../../fakes/collections/collection-repository.ts';

// The in-memory CollectionRepository passes the port's behaviour suite for the document collections
// (postgresCollectionRepository passes the same one in
// test/integration/collections/collection-repository-contract.test.ts).
collectionRepositoryContract(t, async () => memoryCollectionRepository());
