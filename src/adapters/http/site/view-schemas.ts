import { Type } from 'typebox';

// The schemas of the saved views API (view-routes.ts). The bounds repeat the domain's
// (src/domain/site/saved-views.ts#parseViewFields decides; these document them and stop the
// obviously wrong early).

const Slug = Type.String({ pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', maxLength: 128 });
const DateText = Type.String({ maxLength: 24, examples: ['2024-05-01'] });

const ViewStateSchema = Type.Object(
  {
    lng: Type.Optional(Type.Number({ minimum: -180, maximum: 180, examples: [139.69] })),
    lat: Type.Optional(Type.Number({ minimum: -85, maximum: 85, examples: [35.68] })),
    zoom: Type.Optional(Type.Number({ minimum: 0, maximum: 22, examples: [9] })),
    catalog: Type.Optional(Type.Union([Type.Literal(''), Slug])),
    datasets: Type.Optional(Type.Array(Slug, { maxItems: 50 })),
    startDate: Type.Optional(Type.Union([Type.Literal(''), DateText])),
    endDate: Type.Optional(Type.Union([Type.Literal(''), DateText])),
    mode: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('markers'), Type.Literal('tiles')])),
  },
  { additionalProperties: false, description: "The Explore page's state (its URL's names)" },
);

const Origins = Type.Array(Type.String({ maxLength: 300, examples: ['https://news.example.org'] }), {
  maxItems: 20,
  description: 'Sites allowed to frame the embed (origins: scheme, host, port). Empty: no framing.',
});

const fields = {
  title: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  state: Type.Optional(ViewStateSchema),
  isPublic: Type.Optional(Type.Boolean({ description: 'Anyone may open it (default: only you)' })),
  embedOrigins: Type.Optional(Origins),
};

export const NewView = Type.Object(fields, { additionalProperties: false });
export const ViewChange = Type.Partial(Type.Object(fields), { additionalProperties: false });

export const ViewCodeParams = Type.Object(
  { code: Type.String({ maxLength: 64, examples: ['Qm3xT8pLw2'] }) },
  { additionalProperties: false },
);

export const ViewDoc = Type.Object({
  id: Type.String({ description: 'The short code of /v/{id} and /embed/{id}', examples: ['Qm3xT8pLw2'] }),
  title: Type.String(),
  description: Type.String(),
  state: ViewStateSchema,
  isPublic: Type.Boolean(),
  embedOrigins: Type.Array(Type.String()),
  url: Type.String({ description: 'The short link that opens the Explore page on the view' }),
  embedUrl: Type.String(),
  embedSnippet: Type.String({ description: 'An <iframe> to paste into a page of an allowed site' }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

export const ViewList = Type.Object({ docs: Type.Array(ViewDoc) });
