import { type TSchema, Type } from 'typebox';
import { type DocumentCollectionSlug, MAX_DATE_FIELDS } from '../../../domain/collections/collections.ts';
import { MAX_SLUG_LENGTH, SLUG_PATTERN } from '../../../domain/collections/slugs.ts';

// The schemas of the collection routes (collection-routes.ts): each collection's document, create
// and update bodies, in Payload CMS's shapes.

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Timestamp = Type.String({ format: 'date-time' });
const Slug = Type.String({ pattern: SLUG_PATTERN.source, maxLength: MAX_SLUG_LENGTH });
const Title = Type.String({ minLength: 1, maxLength: 255 });
const TrustLevel = Type.Integer({ minimum: 0, maximum: 5 });
const Role = Type.Union([Type.Literal('admin'), Type.Literal('user')]);
const Location = Type.Object(
  {
    longitude: Type.Number({ minimum: -180, maximum: 180 }),
    latitude: Type.Number({ minimum: -90, maximum: 90 }),
  },
  { additionalProperties: false },
);
export const strict = { additionalProperties: false } as const;

/**
 * A dataset's location privacy (issue 38 §4, docs/api-v1.md): the generalisation size in metres
 * (10 to 1,000,000; null lifts it) and the minimum count of events per cell (1 to 1000).
 */
const PrivacyInput = {
  privacyCellMetres: Type.Optional(
    Type.Union([Type.Integer({ minimum: 10, maximum: 1_000_000 }), Type.Null()], {
      description:
        'Location privacy: coordinates are generalised to cells of this many metres (null: exact).',
    }),
  ),
  privacyMinCount: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1000,
      description: 'Location privacy: cells holding fewer events of the dataset show no location.',
    }),
  ),
};

// Catalogs and datasets describe themselves the same way.
const describedDoc = {
  slug: Type.String(),
  title: Type.String(),
  description: Nullable(Type.String()),
  isPublic: Type.Boolean(),
  createdBy: Nullable(Type.Integer()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};
const describedInput = {
  slug: Slug,
  title: Title,
  description: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
  isPublic: Type.Optional(Type.Boolean()),
  createdBy: Type.Optional(Type.Integer({ minimum: 1 })),
};

/** Whether the dataset's events show their provenance (issue 38 §5; default true). */
const ProvenancePublic = Type.Boolean({
  description:
    "Whether the dataset's events show where they came from: the `provenance` field of /api/v1/events and " +
    'the page /events/{id}/provenance. When false both say nothing beyond the dataset (the page answers 404).',
});

// The custom date fields the read API's `dateField` parameter offers for this dataset's events
// (docs/api-v1.md, "Custom date fields"); each checked by parseDateFields in the use case.
const DateFields = Type.Optional(
  Type.Array(Type.String({ maxLength: 200 }), {
    maxItems: MAX_DATE_FIELDS,
    description:
      "Paths into the events' `data` that hold dates, such as `startDate` (stored without `data.`).",
  }),
);

export type CollectionSchemas = {
  doc: TSchema;
  create: TSchema;
  update: TSchema;
  label: string;
  docId: string;
};

export const SCHEMAS: Record<DocumentCollectionSlug, CollectionSchemas> = {
  users: {
    label: 'User',
    docId: 'UserDoc',
    doc: Type.Object(
      {
        id: Type.Integer(),
        email: Type.String(),
        role: Role,
        trustLevel: TrustLevel,
        createdAt: Timestamp,
        updatedAt: Timestamp,
      },
      { $id: 'UserDoc' },
    ),
    create: Type.Object(
      {
        email: Type.String({ maxLength: 320 }),
        password: Type.String({ maxLength: 1024 }),
        role: Type.Optional(Role),
        trustLevel: Type.Optional(TrustLevel),
      },
      strict,
    ),
    update: Type.Object(
      {
        email: Type.Optional(Type.String({ maxLength: 320 })),
        password: Type.Optional(Type.String({ maxLength: 1024 })),
        role: Type.Optional(Role),
        trustLevel: Type.Optional(TrustLevel),
      },
      strict,
    ),
  },
  catalogs: {
    label: 'Catalog',
    docId: 'CatalogDoc',
    doc: Type.Object({ id: Type.Integer(), ...describedDoc }, { $id: 'CatalogDoc' }),
    create: Type.Object(describedInput, strict),
    update: Type.Partial(Type.Object(describedInput), strict),
  },
  datasets: {
    label: 'Dataset',
    docId: 'DatasetDoc',
    doc: Type.Object(
      {
        id: Type.Integer(),
        catalog: Type.Integer(),
        ...describedDoc,
        dateFields: Type.Array(Type.String()),
        provenancePublic: ProvenancePublic,
        privacyCellMetres: Type.Union([Type.Integer(), Type.Null()]),
        privacyMinCount: Type.Integer(),
      },
      { $id: 'DatasetDoc' },
    ),
    create: Type.Object(
      {
        catalog: Type.Integer({ minimum: 1 }),
        ...describedInput,
        dateFields: DateFields,
        provenancePublic: Type.Optional(ProvenancePublic),
        ...PrivacyInput,
      },
      strict,
    ),
    update: Type.Partial(
      Type.Object({
        catalog: Type.Integer({ minimum: 1 }),
        ...describedInput,
        dateFields: DateFields,
        provenancePublic: Type.Optional(ProvenancePublic),
        ...PrivacyInput,
      }),
      strict,
    ),
  },
  events: {
    label: 'Event',
    docId: 'EventDoc',
    doc: Type.Object(
      {
        id: Type.Integer(),
        dataset: Type.Integer(),
        catalog: Type.Integer(),
        uniqueId: Type.String(),
        title: Nullable(Type.String()),
        data: Type.Record(Type.String(), Type.Unknown()),
        location: Nullable(Type.Object({ longitude: Type.Number(), latitude: Type.Number() })),
        eventTimestamp: Timestamp,
        isValid: Type.Boolean(),
        createdAt: Timestamp,
        updatedAt: Timestamp,
      },
      { $id: 'EventDoc' },
    ),
    create: Type.Object(
      {
        dataset: Type.Integer({ minimum: 1 }),
        uniqueId: Type.String({ minLength: 1, maxLength: 255 }),
        title: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
        data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
        location: Type.Optional(Nullable(Location)),
        eventTimestamp: Timestamp,
        isValid: Type.Optional(Type.Boolean()),
      },
      strict,
    ),
    update: Type.Object(
      {
        dataset: Type.Optional(Type.Integer({ minimum: 1 })),
        uniqueId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
        title: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
        data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
        location: Type.Optional(Nullable(Location)),
        eventTimestamp: Type.Optional(Timestamp),
        isValid: Type.Optional(Type.Boolean()),
      },
      strict,
    ),
  },
};

export const collectionSchemas = Object.values(SCHEMAS).map((s) => s.doc);

export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });
