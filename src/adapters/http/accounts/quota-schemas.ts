import { Type } from 'typebox';
import { QUOTA_NAMES, type QuotaName } from '../../../domain/accounts/quotas.ts';

// The schemas of GET /api/quotas (quota-routes.ts): the spec's current shape and, with
// ?variant=earlier, the earlier variant's.

const Counted = Type.Object({ used: Type.Number(), limit: Type.Number(), remaining: Type.Number() });
const CountedEarlier = Type.Object({
  used: Type.Number(),
  limit: Type.Number(),
  remaining: Type.Number(),
  allowed: Type.Boolean(),
  resetTime: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  description: Type.String(),
});
const Ceiling = Type.Object({ limit: Type.Number() });
const CeilingEarlier = Type.Object({
  limit: Type.Number(),
  allowed: Type.Boolean(),
  resetTime: Type.Null(),
  description: Type.String(),
});

export const COUNTED = QUOTA_NAMES.filter((name) => name !== 'maxFileSizeMB');

const shape = <
  T extends typeof Counted | typeof CountedEarlier,
  C extends typeof Ceiling | typeof CeilingEarlier,
>(
  counted: T,
  ceiling: C,
) =>
  Type.Object({
    ...Object.fromEntries(COUNTED.map((name) => [name, counted])),
    maxFileSizeMB: ceiling,
  } as Record<QuotaName, T | C>);

export const QuotaQuery = Type.Object(
  { variant: Type.Optional(Type.Union([Type.Literal('current'), Type.Literal('earlier')])) },
  { additionalProperties: false },
);

// The earlier variant first: the serializer takes the first branch that fits, and only it has `user`.
export const QuotaAnswer = Type.Union([
  Type.Object({
    user: Type.Object({
      id: Type.Number(),
      email: Type.String(),
      role: Type.Union([Type.Literal('admin'), Type.Literal('user')]),
      trustLevel: Type.String({ description: "'0' to '5'" }),
    }),
    quotas: shape(CountedEarlier, CeilingEarlier),
    summary: Type.Object({
      hasUnlimitedAccess: Type.Boolean(),
      nextResetTime: Type.String({ format: 'date-time' }),
    }),
  }),
  Type.Object({ quotas: shape(Counted, Ceiling) }),
]);
