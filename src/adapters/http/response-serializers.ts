import fastJsonStringify, { type Options, type Schema as SerializerSchema } from 'fast-json-stringify';

// Fastify compiles one fast-json-stringify serializer per route and status, and hands each build
// every shared schema of the app (app.addSchema: about sixty here). fast-json-stringify checks the
// depth of, and validates against its meta-schema, every shared schema it is given on every build,
// so building the app cost (routes × shared schemas) validations: 1.3-2.7 s of each `ready()`
// (measured with --cpu-prof, 2026-11-28: fast-json-stringify's schema validator was the largest
// item). Each build here is given only the shared schemas its route's schema refers to,
// transitively; the serializer generated is the same, since fast-json-stringify reads no shared
// schema that no $ref reaches.

type Schema = Record<string, unknown>;
type RouteDefinition = { schema?: unknown };

/** The ids of the schemas a schema's `$ref`s name (local refs, `#/…`, name none). */
function refIds(schema: unknown, into: Set<string>): void {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value !== 'object' || value === null) continue;
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string') {
        const id = child.split('#')[0]!;
        if (id !== '') into.add(id);
      } else if (typeof child === 'object' && child !== null) stack.push(child);
    }
  }
}

/**
 * The shared schemas a schema reaches through `$ref`, by id; null when a ref names no shared schema
 * (then the build gets them all and fast-json-stringify reports the unknown ref as it always did).
 */
export function reachableSchemas(
  schema: unknown,
  shared: Record<string, Schema>,
): Record<string, Schema> | null {
  const ids = new Set<string>();
  refIds(schema, ids);
  const reached: Record<string, Schema> = {};
  const pending = [...ids];
  while (pending.length > 0) {
    const id = pending.pop()!;
    if (id in reached) continue;
    const found = shared[id];
    if (!found) return null;
    reached[id] = found;
    const more = new Set<string>();
    refIds(found, more);
    for (const next of more) if (!(next in reached)) pending.push(next);
  }
  return reached;
}

/** Fastify's serializer factory (schemaController.compilersFactory.buildSerializer). */
export function buildResponseSerializers(externalSchemas?: unknown, options?: Options) {
  const shared = (externalSchemas ?? {}) as Record<string, Schema>;
  return ({ schema }: RouteDefinition) => {
    const reached = reachableSchemas(schema, shared) ?? { ...shared };
    // As Fastify's own compiler does: a route schema that is itself shared is not given twice.
    const id = (schema as Schema | undefined)?.$id;
    if (typeof id === 'string') delete reached[id];
    const external = reached as unknown as Record<string, SerializerSchema>;
    return fastJsonStringify(schema as SerializerSchema, { ...options, schema: external });
  };
}
