// Field types of a dataset's events, inferred from a sample of their `data` objects. Nested objects
// are walked (up to a depth) so that `data.address.city` is a field of its own, as the `sort` and
// `dateField` parameters address it.

type FieldType = 'string' | 'number' | 'boolean' | 'date' | 'object' | 'array' | 'null';
export type InferredField = {
  path: string;
  types: FieldType[];
  /** In how many sampled events the field is present (null counts as present). */
  present: number;
  /** Up to three distinct example values. */
  examples: unknown[];
  /** A declared date field (dataset setting `dateFields`), usable as `dateField=data.<name>`. */
  declaredDate: boolean;
};

const MAX_DEPTH = 3;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

export function inferFields(
  samples: Array<Record<string, unknown>>,
  dateFields: string[] = [],
): InferredField[] {
  const fields = new Map<string, { types: Set<FieldType>; present: number; examples: unknown[] }>();
  const visit = (value: unknown, path: string, depth: number) => {
    let field = fields.get(path);
    if (!field) {
      field = { types: new Set(), present: 0, examples: [] };
      fields.set(path, field);
    }
    field.present += 1;
    const type = typeOf(value);
    field.types.add(type);
    if (
      type !== 'object' &&
      type !== 'array' &&
      field.examples.length < 3 &&
      !field.examples.includes(value)
    ) {
      field.examples.push(value);
    }
    if (type === 'object' && depth < MAX_DEPTH) {
      for (const [key, child] of Object.entries(value as Record<string, unknown>))
        visit(child, `${path}.${key}`, depth + 1);
    }
  };
  for (const sample of samples) {
    for (const [key, value] of Object.entries(sample)) visit(value, `data.${key}`, 1);
  }
  const declared = new Set(dateFields.map((name) => (name.startsWith('data.') ? name : `data.${name}`)));
  return [...fields.entries()]
    .map(([path, field]) => ({
      path,
      types: [...field.types].sort(),
      present: field.present,
      examples: field.examples,
      declaredDate: declared.has(path),
    }))
    .sort((a, b) => a.path.localeCompare(b.path));
}

function typeOf(value: unknown): FieldType {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'string')
    return ISO_DATE.test(value) && !Number.isNaN(Date.parse(value)) ? 'date' : 'string';
  return 'object';
}
