import { Type } from 'typebox';
import { MAX_FIX_ADDRESSES } from '../../../application/ingest/geocoding/unplaced-rows.ts';

// The schemas of a job's geocoding outcome (geocoding-outcome-routes.ts): the report of rows not
// placed, and the fixes a caller sends.
/** Rows listed in the JSON answer; the CSV has them all. */
export const LISTED = 1000;

const COLUMN = Type.String({ minLength: 1, maxLength: 255 });

const Alternative = Type.Object({
  name: Type.String(),
  country: Type.String({ description: 'ISO 3166-1 alpha-2.' }),
  region: Type.Union([Type.String(), Type.Null()]),
  latitude: Type.Number(),
  longitude: Type.Number(),
  population: Type.Integer(),
});

const Row = Type.Object({
  row: Type.Integer({ description: 'The 1-based data row of the file (the header not counted).' }),
  address: Type.String({ description: 'The address that was looked up.' }),
  reason: Type.Union([Type.Literal('not-found'), Type.Literal('low-confidence')]),
  candidate: Type.Union([
    Type.Object(
      {
        name: Type.Union([Type.String(), Type.Null()]),
        country: Type.Union([Type.String(), Type.Null()]),
        region: Type.Union([Type.String(), Type.Null()]),
        confidence: Type.Number(),
        candidateCount: Type.Union([Type.Integer(), Type.Null()], {
          description:
            'Distinct places of the name that fit the address (null when the provider does not say).',
        }),
        alternatives: Type.Array(Alternative, {
          description:
            'The places an ambiguous address may mean, best first (at most 5; offline gazetteer only).',
        }),
      },
      { description: 'The best place found, refused for its confidence under GEOCODER_MIN_CONFIDENCE.' },
    ),
    Type.Null(),
  ]),
});

const Counts = Type.Object(
  {
    rows: Type.Integer({ description: 'Events whose location was looked up by their address.' }),
    located: Type.Integer(),
    notFound: Type.Integer(),
    lowConfidence: Type.Integer(),
  },
  { description: 'In rows (events), as they stand now: a row placed afterwards counts as located.' },
);

export const Report = Type.Object({
  jobId: Type.Integer(),
  geocoded: Type.Boolean({
    description: 'False while the job has not stored its events, or when no address was looked up.',
  }),
  counts: Counts,
  unplaced: Type.Array(Row, { description: `The rows not placed, in file order: the first ${LISTED}.` }),
  columns: Type.Array(Type.String(), { description: "The file's columns: what a fix may name." }),
  truncated: Type.Boolean({ description: 'More rows are not placed than are listed (the CSV has all).' }),
});

export const Fix = Type.Union(
  [
    Type.Object(
      { address: Type.Array(COLUMN, { minItems: 1, maxItems: 8 }) },
      {
        additionalProperties: false,
        description: 'Address columns, joined with commas (empty values left out).',
      },
    ),
    Type.Object(
      { latitude: COLUMN, longitude: COLUMN },
      { additionalProperties: false, description: 'Coordinate columns (decimal degrees).' },
    ),
  ],
  { description: 'Where the rows not placed take their location from: columns of the imported file.' },
);

export const FixResult = Type.Object({
  ...Report.properties,
  placed: Type.Integer({ description: 'Events given a location by this request.' }),
  notAsked: Type.Integer({
    description: `New addresses beyond the ${MAX_FIX_ADDRESSES} one request asks the geocoder for: post again for them.`,
  }),
});
