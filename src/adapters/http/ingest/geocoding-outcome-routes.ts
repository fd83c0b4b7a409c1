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
import { Fix, FixResult, LISTED, Report } from './geocoding-outcome-schemas.ts';

// An import job's geocoding outcome in rows (issue 28 §5): the counts, the rows not placed as JSON
// and as CSV, and placing them afterwards by other address columns or coordinate columns. For the
// uploader, the target catalog's owner and admins: 401 anonymous, 404 for anyone else.

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
