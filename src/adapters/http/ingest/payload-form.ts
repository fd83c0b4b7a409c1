import { ValidationError } from '../../../domain/errors.ts';
import { parseJsonField } from '../input-guards.ts';

// Payload CMS's upload form (issue 35 §6): @payloadcms/sdk's create with a `file` sends
// multipart/form-data with the file and one field `_payload`, the document's data as JSON. Its
// keys are read as the form fields of the same names (catalog, dataset, settings, start), so an
// upload through the SDK and one with plain form fields are the same request.

const PAYLOAD_FIELD = '_payload';
const PAYLOAD_KEYS = new Set(['catalog', 'catalogId', 'dataset', 'settings', 'start']);

/**
 * The form's fields with `_payload`'s keys added as text (objects as JSON, numbers and booleans as
 * written). A key given both ways, a key the upload does not take, or `_payload` that is not a JSON
 * object is a 400 naming it.
 */
export function withPayloadField(fields: Record<string, string>): Record<string, string> {
  const text = fields[PAYLOAD_FIELD];
  if (text === undefined) return fields;
  const data = parseJsonField(text, PAYLOAD_FIELD);
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new ValidationError('_payload must be a JSON object', { field: PAYLOAD_FIELD });
  }
  const merged = Object.create(null) as Record<string, string>;
  for (const [key, value] of Object.entries(fields)) if (key !== PAYLOAD_FIELD) merged[key] = value;
  for (const [key, value] of Object.entries(data)) {
    if (!PAYLOAD_KEYS.has(key))
      throw new ValidationError(`_payload: the upload takes no "${key.slice(0, 60)}"`, {
        field: PAYLOAD_FIELD,
      });
    if (key in merged)
      throw new ValidationError(`${key} is given both as a form field and in _payload`, { field: key });
    if (value === null || value === undefined) continue;
    merged[key] = typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
  return merged;
}
