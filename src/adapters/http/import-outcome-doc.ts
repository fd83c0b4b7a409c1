import { Type } from 'typebox';

// Shared by the ingest and scraper routes: the outcome of the import a scheduled run or a scraper run created (postgres/import-outcome.ts),
// in the runs of GET /api/scheduled-ingests/{id}/runs and the scraper-runs documents.

const Count = (description: string) => Type.Union([Type.Integer(), Type.Null()], { description });

export const ImportOutcomeDoc = Type.Union([
  Type.Object(
    {
      ingestFile: Type.Integer({ description: 'The ingest file: GET /api/ingest/{id}/progress' }),
      status: Type.Union(
        ['pending', 'processing', 'needs-review', 'completed', 'partial', 'failed'].map((status) =>
          Type.Literal(status),
        ),
      ),
      rowsNew: Count('Events stored new; null until create-events completed'),
      rowsUpdated: Count('Stored events updated (duplicateHandling update)'),
      rowsUnchanged: Count('Rows found stored already, left as they were'),
      reviewReasons: Type.Array(Type.String(), { description: 'Why it waits, while it is in needs-review' }),
    },
    { additionalProperties: false },
  ),
  Type.Null(),
]);
