import t from 'tap';
import { sourceFilesContract } from '../../../contracts/ingest/source-files.ts';
import { memorySourceFiles } from '../../../fakes/ingest/source-files.ts';

// The in-memory SourceFiles passes the port's behaviour suite (localSourceFiles passes the same one
// over real files in test/unit/adapters/files/source-files-contract.test.ts).
sourceFilesContract(t, async () => {
  const files = memorySourceFiles();
  return { files, put: async (file, sheets) => files.put(file.storedPath, sheets) };
});
