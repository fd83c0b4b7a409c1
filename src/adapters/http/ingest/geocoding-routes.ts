import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  MAX_TEST_ADDRESS_CHARS,
  testGeocoding,
} from '../../../application/ingest/geocoding/test-geocoding.ts';
import type { Geocoder } from '../../../ports/ingest/geocoder.ts';
import { errorResponses } from '../error-body.ts';
import { USER_ONLY } from '../require-user.ts';
import { NoQuery } from '../schemas.ts';
import { viewerOf } from '../viewer.ts';
import { GeocodingTestAnswer } from './geocoding-schemas.ts';

export const geocodingRoutes: FastifyPluginAsyncTypebox<{ geocoder: Geocoder | null }> = async (
  app,
  { geocoder },
) => {
  app.post(
    '/api/geocoding/test',
    {
      // Anonymous callers get their 401 before the body is validated, like every user-only route.
      config: USER_ONLY,
      schema: {
        tags: ['ingestion'],
        summary: 'Geocode one address and show every candidate (admins)',
        description:
          'Runs the configured geocoder chain on one address and answers every candidate each provider considered, ' +
          'with its score and why it was rejected. 401 without a login, 403 for non-admins.',
        querystring: NoQuery,
        body: Type.Object(
          { address: Type.String({ minLength: 1, maxLength: MAX_TEST_ADDRESS_CHARS }) },
          { additionalProperties: false },
        ),
        response: { 200: GeocodingTestAnswer, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) =>
      testGeocoding(geocoder, viewerOf(request), (request.body as { address: string }).address),
  );
};
