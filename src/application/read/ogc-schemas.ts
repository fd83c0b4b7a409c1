import { GEOMETRY_PROPERTY } from '../../domain/read/cql2-tree.ts';
import { type PropertyField, propertySchemas } from '../../domain/read/typed-properties.ts';

// The JSON Schemas of a collection: its queryables (OGC API – Features Part 3: what a filter may
// name) and the schema of its features (Part 5, the `describedby` link), both from its typed
// properties (src/domain/read/typed-properties.ts) and the fixed properties every feature carries.

const JSON_SCHEMA = 'https://json-schema.org/draft/2020-12/schema';

export function collectionSchemas(collectionUrl: string, title: string, fields: readonly PropertyField[]) {
  const typed = propertySchemas(fields);
  const geometry = {
    title: 'The event location',
    format: 'geometry-point',
    'x-ogc-role': 'primary-geometry',
  };
  const queryables = {
    $schema: JSON_SCHEMA,
    $id: `${collectionUrl}/queryables`,
    type: 'object',
    title: `${title}: queryables`,
    properties: {
      [GEOMETRY_PROPERTY]: geometry,
      id: { title: 'The event id', type: 'integer' },
      title: { title: 'The event title', type: 'string' },
      eventTimestamp: { title: 'When the event happened', type: 'string', format: 'date-time' },
      ...typed,
    },
    additionalProperties: false,
  };
  const schema = {
    $schema: JSON_SCHEMA,
    $id: `${collectionUrl}/schema`,
    type: 'object',
    title,
    properties: {
      [GEOMETRY_PROPERTY]: geometry,
      id: { title: 'The event id', type: 'integer', 'x-ogc-role': 'id' },
      title: { title: 'The event title', type: 'string' },
      eventTimestamp: {
        title: 'When the event happened',
        type: 'string',
        format: 'date-time',
        'x-ogc-role': 'primary-instant',
      },
      dataset: { title: 'The dataset slug (the collection id)', type: 'string' },
      catalog: { title: 'The catalog slug', type: 'string' },
      ...typed,
      data: { title: "The event's data as imported", type: 'object' },
    },
  };
  return { queryables, schema };
}
