import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { FlagChanges } from './feature-flag-schemas.ts';
import { changeFeatureFlags, readFeatureFlags } from '../../../application/site/feature-flags.ts';
import type { FeatureFlagStore } from '../../../ports/site/feature-flag-store.ts';
import { errorResponses } from '../error-body.ts';
import { USER_ONLY } from '../require-user.ts';
import { NoQuery } from '../schemas.ts';
import { viewerOf } from '../viewer.ts';

export const featureFlagRoutes: FastifyPluginAsyncTypebox<{ flags: FeatureFlagStore }> = async (
  app,
  { flags },
) => {
  app.get(
    '/api/feature-flags',
    {
      schema: {
        tags: ['accounts'],
        summary: 'Current feature flags',
        description: 'Public. `enableScrapers` is off until an admin switches it on.',
        querystring: NoQuery,
        response: { 200: Type.Ref('FeatureFlags'), ...errorResponses(400) },
      },
    },
    async () => readFeatureFlags(flags),
  );

  app.patch(
    '/api/feature-flags',
    {
      config: USER_ONLY,
      schema: {
        tags: ['accounts'],
        summary: 'Change feature flags (admins)',
        description: 'Send only the flags to change. 401 without a login, 403 for non-admins.',
        querystring: NoQuery,
        body: FlagChanges,
        response: { 200: Type.Ref('FeatureFlags'), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => changeFeatureFlags(flags, viewerOf(request), request.body as Record<string, unknown>),
  );
};
