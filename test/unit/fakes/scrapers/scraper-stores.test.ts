import t from 'tap';
import { scraperStoresContract } from '../../../contracts/scrapers/scraper-stores.ts';
import { memoryScraperStores } from '../../../fakes/scrapers/scraper-stores.ts';

// The in-memory scraper stores pass the ports' behaviour suite (the Postgres adapters pass the same
// one in test/integration/scrapers/scraper-stores-contract.test.ts). Users, catalogs and datasets
// are only ids here: the fake keeps no rows of other features.
let ids = 0;
scraperStoresContract(t, async () => {
  const stores = memoryScraperStores();
  const next = async () => ++ids;
  return {
    ...stores,
    user: next,
    catalog: next,
    dataset: next,
    addImport: async (datasetId, completed) => stores.addImport(datasetId, completed),
  };
});
