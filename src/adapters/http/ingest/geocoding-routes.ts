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

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

const Candidate = Type.Object({
  name: Type.String(),
  country: Type.String(),
  region: Nullable(Type.String()),
  latitude: Type.Number(),
  longitude: Type.Number(),
  population: Type.Number(),
  matchedText: Type.String({ description: 'The part of the address it was found under.' }),
  score: Type.Number({
    description:
      'Offline: relative weight (population, kind of place, main or alternate name); online: the server\u2019s own score.',
  }),
  rejected: Nullable(
    Type.String({ description: 'Why it is not an answer (outside a named country or region).' }),
  ),
});

const Outcome = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      'The provider\u2019s answer: `location` and `confidence`, or `failure` (with `lowConfidence` when a place was found under the threshold); `match` says what was matched.',
  },
);

const GeocodingTestAnswer = Type.Object({
  address: Type.String(),
  geocoder: Nullable(Type.String({ description: 'The configured chain; null when geocoding is off.' })),
  providers: Type.Array(
    Type.Object({ provider: Type.String(), outcome: Outcome, candidates: Type.Array(Candidate) }),
    {
      description:
        'Each provider asked, in order: the offline gazetteer, then the online one if it was needed.',
    },
  ),
});

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
