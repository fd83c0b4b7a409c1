import { Type } from 'typebox';

// The `provenance` object of /api/v1/events and /api/v1/events/{id} (issue 38 §5;
// domain/read/provenance.ts). Additive: an event's other fields are as the spec shapes them.

const NullableString = (description?: string) =>
  Type.Unsafe<string | null>({ type: ['string', 'null'], ...(description ? { description } : {}) });
const NullableInteger = (description: string) =>
  Type.Unsafe<number | null>({ type: ['integer', 'null'], minimum: 1, description });
const Sha256 = NullableString('Hex SHA-256 of the imported file, computed while it was stored.');

const Source = Type.Union(
  [
    Type.Object(
      { kind: Type.Literal('upload'), fileName: Type.String(), sha256: Sha256 },
      { description: 'An uploaded file.' },
    ),
    Type.Object(
      {
        kind: Type.Literal('url'),
        url: NullableString(
          'The URL fetched, with user name, password and secret-looking query parameters (token, key, secret, signature, ...) replaced by REDACTED.',
        ),
        trigger: Type.Union([Type.Literal('scheduled'), Type.Literal('webhook')]),
        fetchedAt: NullableString('When it was fetched.'),
        etag: NullableString('The ETag the server answered with.'),
        lastModified: NullableString('The Last-Modified the server answered with.'),
        fileName: Type.String(),
        sha256: Sha256,
      },
      { description: 'A scheduled (or webhook-triggered) URL import.' },
    ),
    Type.Object(
      {
        kind: Type.Literal('scraper'),
        runId: NullableString("The runner's run id."),
        commit: NullableString('The git commit the scraper ran (null for uploaded code).'),
        fileName: Type.String(),
        sha256: Sha256,
      },
      { description: "A scraper run's output." },
    ),
    Type.Null({
      description: 'Not known (the event was not stored by an import, or its import was removed).',
    }),
  ],
  { description: 'What the import read. Only for one event (/api/v1/events/{id}).' },
);

export const Provenance = Type.Union(
  [
    Type.Object(
      {
        shown: Type.Literal(true),
        importJob: NullableInteger(
          'The import job that stored (or last changed) the event; null when no import did.',
        ),
        row: NullableInteger('Its data row in the file (1-based, after the header row).'),
        sheet: Type.Optional(
          Type.Unsafe<{ index: number; name: string | null } | null>({
            type: ['object', 'null'],
            properties: { index: { type: 'integer', minimum: 0 }, name: { type: ['string', 'null'] } },
            required: ['index', 'name'],
            description: "The job's sheet (a CSV has one, index 0 and no name). Only for one event.",
          }),
        ),
        source: Type.Optional(Source),
        storedAt: Type.String({ format: 'date-time', description: 'When the event was first stored.' }),
        changedAt: Type.String({ format: 'date-time', description: 'When its content last changed.' }),
        page: Type.String({ description: 'The public provenance page, /events/{id}/provenance.' }),
      },
      { description: 'Where the event came from.' },
    ),
    Type.Object(
      { shown: Type.Literal(false) },
      { description: "The dataset's owner hides provenance: nothing is said beyond the dataset." },
    ),
  ],
  { description: 'Where the event came from (an addition to the spec).' },
);
