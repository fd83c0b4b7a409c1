import { Type } from 'typebox';

// The schemas of the geocoder test (geocoding-routes.ts): its candidates and outcome.
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

export const GeocodingTestAnswer = Type.Object({
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
