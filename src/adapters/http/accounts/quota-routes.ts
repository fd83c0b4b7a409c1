import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { isUnlimited } from '../../../domain/access.ts';
import { nextDailyReset, type QuotaName } from '../../../domain/accounts/quotas.ts';
import { COUNTED, QuotaAnswer, QuotaQuery } from './quota-schemas.ts';
import type { Quotas, QuotaStatus } from '../../../ports/accounts/quotas.ts';
import { requireUser } from '../authentication.ts';
import { errorResponses } from '../error-body.ts';
import { USER_ONLY } from '../require-user.ts';
import type { Clock } from '../../../ports/clock.ts';

// GET /api/quotas in the spec's current shape, and with ?variant=earlier the earlier variant's
// extra fields and headers. Unlimited quotas (admins, level 5) show -1 as limit and remaining.

const UNLIMITED = -1;

const limitOf = (status: QuotaStatus) => status.limit ?? UNLIMITED;
const remainingOf = (status: QuotaStatus) => status.remaining ?? UNLIMITED;

export const quotaRoutes: FastifyPluginAsyncTypebox<{ quotas: Quotas; clock: Clock }> = async (app, deps) => {
  app.get(
    '/api/quotas',
    {
      config: USER_ONLY,
      schema: {
        tags: ['accounts'],
        summary: "Your quotas and today's usage",
        description:
          'Needs a logged-in user. Limits follow the trust level (config/quotas.yaml); -1 means unlimited. ' +
          'Daily quotas reset at midnight UTC. `?variant=earlier` answers the earlier variant: `user`, per-quota ' +
          '`allowed`/`resetTime`/`description`, `summary`, and X-RateLimit-* headers describing the daily quota ' +
          'closest to its limit. eventsPerImport is a ceiling per import, so its `used` is always 0.',
        querystring: QuotaQuery,
        response: {
          200: QuotaAnswer,
          ...errorResponses(400, 401),
        },
      },
    },
    async (request, reply) => {
      const user = requireUser(request);
      const statuses = await deps.quotas.status(user.id);
      const byName = new Map(statuses.map((s) => [s.quota, s]));
      const get = (name: QuotaName) => byName.get(name) as QuotaStatus;
      // Built from the quota list, so TypeScript cannot see the per-name keys the schema checks.
      if (request.query.variant !== 'earlier') {
        return reply.send({
          quotas: {
            ...Object.fromEntries(
              COUNTED.map((name) => {
                const s = get(name);
                return [name, { used: s.used, limit: limitOf(s), remaining: remainingOf(s) }];
              }),
            ),
            maxFileSizeMB: { limit: limitOf(get('maxFileSizeMB')) },
          },
        } as never);
      }
      const now = deps.clock.now();
      const allowed = (s: QuotaStatus) => s.remaining === null || s.remaining > 0;
      const daily = statuses.filter((s) => s.resetTime !== null);
      // A limit of 0 is no access (scraper runs below level 3), not a rate: the headers describe the
      // tightest daily quota the user can spend, or none when all are unlimited or closed.
      const tightest = daily
        .filter((s) => s.limit !== null && s.limit > 0)
        .sort((a, b) => (a.remaining ?? 0) - (b.remaining ?? 0))[0];
      reply.header('X-RateLimit-Limit', String(tightest ? limitOf(tightest) : UNLIMITED));
      reply.header('X-RateLimit-Remaining', String(tightest ? remainingOf(tightest) : UNLIMITED));
      reply.header('X-RateLimit-Reset', nextDailyReset(now).toISOString());
      const maxFile = get('maxFileSizeMB');
      return reply.send({
        user: { id: user.id, email: user.email, role: user.role, trustLevel: String(user.trustLevel) },
        quotas: {
          ...Object.fromEntries(
            COUNTED.map((name) => {
              const s = get(name);
              return [
                name,
                {
                  used: s.used,
                  limit: limitOf(s),
                  remaining: remainingOf(s),
                  allowed: allowed(s),
                  resetTime: s.resetTime?.toISOString() ?? null,
                  description: s.description,
                },
              ];
            }),
          ),
          maxFileSizeMB: {
            limit: limitOf(maxFile),
            allowed: maxFile.limit !== 0,
            resetTime: null,
            description: maxFile.description,
          },
        },
        summary: { hasUnlimitedAccess: isUnlimited(user), nextResetTime: nextDailyReset(now).toISOString() },
      } as never);
    },
  );
};
