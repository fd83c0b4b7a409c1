// The one reading of a `sort` parameter, for the collections API and the /api/v1 read API: comma-
// separated keys, each a field name with an optional leading `-` for descending order. Which names
// are sortable is the caller's whitelist; it refuses the rest with its own error.

export type SortKeyText = { name: string; descending: boolean };

export function parseSortKeys(
  text: string,
  options: { maxKeys: number; refuseCount: () => never; check: (name: string) => void },
): SortKeyText[] {
  const parts = text.split(',').map((part) => part.trim());
  if (parts.length > options.maxKeys) options.refuseCount();
  return parts.map((part) => {
    const descending = part.startsWith('-');
    const name = descending ? part.slice(1) : part;
    options.check(name);
    return { name, descending };
  });
}
