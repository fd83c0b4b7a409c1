import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import {
  geocodingReport,
  MAX_FIX_ADDRESSES,
  type PlacementFix,
  placeUnplacedRows,
  type UnplacedDeps,
  type UnplacedRow,
} from '../../../application/ingest/geocoding/unplaced-rows.ts';
import { csvField } from '../../../domain/csv-field.ts';
import { errorResponses } from '../error-body.ts';
import { USER_ONLY } from '../require-user.ts';
import { IdParams, NoQuery } from '../schemas.ts';
import { viewerOf } from '../viewer.ts';

// An import job's geocoding outcome in rows (issue 28 §5): the counts, the rows not placed as JSON
// and as CSV, and placing them afterwards by other address columns or coordinate columns. For the
// uploader, the target catalog's owner and admins: 401 anonymous, 404 for anyone else.

/** Rows listed in the JSON answer; the CSV has them all. */
const LISTED = 1000;
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

const Report = Type.Object({
  jobId: Type.Integer(),
  geocoded: Type.Boolean({
    description: 'False while the job has not stored its events, or when no address was looked up.',
  }),
  counts: Counts,
  unplaced: Type.Array(Row, { description: `The rows not placed, in file order: the first ${LISTED}.` }),
  columns: Type.Array(Type.String(), { description: "The file's columns: what a fix may name." }),
  truncated: Type.Boolean({ description: 'More rows are not placed than are listed (the CSV has all).' }),
});

const Fix = Type.Union(
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

const FixResult = Type.Object({
  ...Report.properties,
  placed: Type.Integer({ description: 'Events given a location by this request.' }),
  notAsked: Type.Integer({
    description: `New addresses beyond the ${MAX_FIX_ADDRESSES} one request asks the geocoder for: post again for them.`,
  }),
});

const listed = <T extends { unplaced: UnplacedRow[] }>(report: T) => ({
  ...report,
  unplaced: report.unplaced.slice(0, LISTED),
  truncated: report.unplaced.length > LISTED,
});

const CSV_HEADER = [
  'row',
  'address',
  'reason',
  'candidate',
  'candidateCountry',
  'candidateRegion',
  'confidence',
];

/** The rows not placed as CSV: one line per row, each text field defused for spreadsheets. */
function unplacedCsv(rows: UnplacedRow[]): string {
  const line = (fields: string[]) => `${fields.map(csvField).join(',')}\r\n`;
  return (
    line(CSV_HEADER) +
    rows
      .map((r) =>
        line([
          String(r.row),
          r.address,
          r.reason,
          r.candidate?.name ?? '',
          r.candidate?.country ?? '',
          r.candidate?.region ?? '',
          r.candidate ? String(r.candidate.confidence) : '',
        ]),
      )
      .join('')
  );
}

export const geocodingOutcomeRoutes: FastifyPluginAsync<{ ingest: UnplacedDeps }> = async (
  app,
  { ingest },
) => {
  const tags = ['ingestion'];

  app.get(
    '/api/ingest-jobs/:id/geocoding',
    {
      config: USER_ONLY,
      schema: {
        tags,
        summary: "The job's geocoding outcome in rows, with the rows not placed",
        description:
          'Counts of the rows whose address was looked up (located, not found, low confidence) and the rows not ' +
          'placed: row number, address, reason and, for low confidence, the place found. Rows placed since count as located.',
        params: IdParams,
        querystring: NoQuery,
        response: { 200: Report, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: number };
      return listed(await geocodingReport(ingest, viewerOf(request), id));
    },
  );

  app.get(
    '/api/ingest-jobs/:id/geocoding/unplaced.csv',
    {
      config: USER_ONLY,
      schema: {
        tags,
        summary: 'The rows not placed, as CSV',
        description:
          'RFC 4180 CSV (UTF-8, CRLF, a header line): row, address, reason, candidate, candidateCountry, ' +
          'candidateRegion, confidence. A value starting with =, +, -, @, tab or CR gets a leading apostrophe.',
        params: IdParams,
        querystring: NoQuery,
        produces: ['text/csv'],
        response: {
          200: { description: 'The rows not placed', content: { 'text/csv': { schema: Type.String() } } },
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: number };
      const report = await geocodingReport(ingest, viewerOf(request), id);
      return reply
        .type('text/csv; charset=utf-8; header=present')
        .header('content-disposition', `attachment; filename="import-job-${id}-unplaced.csv"`)
        .send(unplacedCsv(report.unplaced));
    },
  );

  app.post(
    '/api/ingest-jobs/:id/geocoding/place',
    {
      config: USER_ONLY,
      schema: {
        tags,
        summary: 'Place the rows not placed by other columns',
        description:
          'Looks up the rows not placed again, and only those: by other address columns (`{address: [...]}`, through ' +
          `the import's geocoder chain and cache, at most ${MAX_FIX_ADDRESSES} new addresses per request) or by ` +
          'coordinate columns (`{latitude, longitude}`). Placed rows are never changed; an event is set once. ' +
          'Answers the counts as they stand after. 400 for a column the file does not have (nothing changes), ' +
          '409 for a job that has not stored its events or geocoded nothing.',
        params: IdParams,
        querystring: NoQuery,
        body: Fix,
        response: { 200: FixResult, ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: number };
      return listed(await placeUnplacedRows(ingest, viewerOf(request), id, request.body as PlacementFix));
    },
  );
};
