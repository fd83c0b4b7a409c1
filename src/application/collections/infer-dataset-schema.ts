import { NotFoundError } from '../../domain/errors.ts';
import { parseInteger, type RawQuery } from '../../domain/read/read-query.ts';
import { type InferredField, inferFields } from '../../domain/collections/schema-inference.ts';
import type { EventReader, Viewer } from '../../ports/read/event-reader.ts';

type InferredSchema = {
  dataset: { id: number; slug: string; title: string };
  sampleSize: number;
  totalEvents: number;
  dateFields: string[];
  fields: InferredField[];
};

/** GET /api/v1/datasets/{id}/schema/infer: field types of the `data` of the dataset's newest events. */
export async function inferDatasetSchema(
  deps: { events: EventReader },
  viewer: Viewer,
  datasetId: number,
  query: RawQuery,
): Promise<InferredSchema> {
  const sampleSize = parseInteger(query.sampleSize, 'sampleSize', { min: 1, max: 5000, fallback: 500 });
  const sample = await deps.events.sampleData(viewer, datasetId, sampleSize);
  if (!sample) throw new NotFoundError(`dataset ${datasetId} not found`, { code: 'DATASET_NOT_FOUND' });
  return {
    dataset: { id: sample.dataset.id, slug: sample.dataset.slug, title: sample.dataset.title },
    sampleSize: sample.samples.length,
    totalEvents: sample.total,
    dateFields: sample.dataset.dateFields,
    fields: inferFields(sample.samples, sample.dataset.dateFields),
  };
}
