import { Type } from 'typebox';

// The schemas of the subscriptions API (subscription-routes.ts). The domain decides
// (src/domain/subscriptions/subscriptions.ts); these document the shapes and stop the obviously
// wrong early.

const Slug = Type.String({ pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', maxLength: 128 });
const DateText = Type.String({ maxLength: 32, examples: ['2024-05-01'] });

const BoundsSchema = Type.Object(
  {
    north: Type.Number({ minimum: -90, maximum: 90 }),
    south: Type.Number({ minimum: -90, maximum: 90 }),
    east: Type.Number({ minimum: -180, maximum: 180 }),
    west: Type.Number({ minimum: -180, maximum: 180 }),
  },
  { additionalProperties: false },
);

const FilterSchema = Type.Object(
  {
    catalog: Type.Optional(Slug),
    datasets: Type.Optional(Type.Array(Slug, { maxItems: 200 })),
    bounds: Type.Optional(BoundsSchema),
    startDate: Type.Optional(DateText),
    endDate: Type.Optional(DateText),
  },
  { additionalProperties: false, description: "The read API's filter (the names of /api/v1/changes)" },
);

export const NewSubscription = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    view: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9]{10}$',
        examples: ['Ab3dE6gH9k'],
        description: "A saved view's code: its filters are used",
      }),
    ),
    filter: Type.Optional(FilterSchema),
    channel: Type.Optional(Type.Union([Type.Literal('webhook'), Type.Literal('email')])),
    url: Type.Optional(Type.String({ maxLength: 2000, examples: ['https://hooks.example.org/chronomap'] })),
    emailAddressId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'For the email channel: one of your confirmed e-mail addresses (400 otherwise)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const SubscriptionChange = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    filter: Type.Optional(FilterSchema),
    url: Type.Optional(Type.String({ maxLength: 2000 })),
    emailAddressId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'An e-mail subscription mails this confirmed address of yours from now on',
      }),
    ),
    enabled: Type.Optional(Type.Boolean({ description: 'true enables a disabled subscription again' })),
  },
  { additionalProperties: false },
);

export const SubscriptionParams = Type.Object(
  { id: Type.String({ pattern: '^[0-9]{1,16}$', description: 'The subscription id' }) },
  { additionalProperties: false },
);

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

export const SubscriptionDoc = Type.Object({
  id: Type.String(),
  name: Type.String(),
  view: Nullable(Type.String()),
  filter: Type.Object({
    catalog: Nullable(Type.String()),
    datasets: Type.Array(Type.String()),
    bounds: Nullable(BoundsSchema),
    startDate: Nullable(Type.String()),
    endDate: Nullable(Type.String()),
  }),
  channel: Type.Union([Type.Literal('webhook'), Type.Literal('email')]),
  url: Nullable(Type.String()),
  emailAddressId: Nullable(Type.String()),
  enabled: Type.Boolean(),
  consecutiveFailures: Type.Integer(),
  disabledReason: Nullable(Type.String()),
  createdAt: Type.String(),
});

export const CreatedSubscription = Type.Object({
  subscription: SubscriptionDoc,
  secret: Nullable(
    Type.String({
      description: 'The webhook signing secret (Standard Webhooks, whsec_…): shown this once only',
    }),
  ),
});

export const SubscriptionList = Type.Object({ docs: Type.Array(SubscriptionDoc) });

export const TestQueued = Type.Object({
  deliveryId: Type.String({ description: 'The webhook-id of the test delivery, to find in the log' }),
  message: Type.String(),
});

export const DeliveryLog = Type.Object({
  docs: Type.Array(
    Type.Object({
      deliveryId: Type.String(),
      kind: Type.Union([Type.Literal('changes'), Type.Literal('test')]),
      attempt: Type.Integer(),
      statusCode: Nullable(Type.Integer()),
      durationMs: Type.Integer(),
      error: Nullable(Type.String()),
      attemptedAt: Type.String(),
    }),
  ),
});
