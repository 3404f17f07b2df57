/**
 * "did you mean" for an unknown field: the keys a zod schema accepts at a path, read from zod's
 * internal definitions (best effort: a schema it cannot read suggests nothing), and the closest
 * of them by edit distance, bounded so that a long key costs little.
 */

type SchemaDef = { type?: string } & Record<string, unknown>;
const defOf = (schema: unknown): SchemaDef | undefined =>
  (schema as { _zod?: { def?: SchemaDef } } | undefined)?._zod?.def;

/** The keys that the object schemas found at `path` accept (best effort; empty when unknown). */
function knownKeysAt(schema: unknown, path: readonly PropertyKey[], depth = 0): string[] {
  const def = defOf(schema);
  if (!def || depth > 64) return [];
  const next = (s: unknown, p: readonly PropertyKey[]) => knownKeysAt(s, p, depth + 1);
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
    case 'nonoptional':
      return next(def.innerType, path);
    case 'pipe':
      return [...next(def.in, path), ...next(def.out, path)];
    case 'lazy':
      return next((def.getter as () => unknown)(), path);
    case 'union':
      return (def.options as unknown[]).flatMap((o) => next(o, path));
    case 'intersection':
      return [...next(def.left, path), ...next(def.right, path)];
    case 'object': {
      const shape = def.shape as Record<string, unknown>;
      if (path.length === 0) return Object.keys(shape);
      const [head, ...rest] = path;
      return typeof head === 'string' && head in shape ? next(shape[head], rest) : [];
    }
    case 'array':
      return typeof path[0] === 'number' ? next(def.element, path.slice(1)) : [];
    case 'record':
      return path.length > 0 ? next(def.valueType, path.slice(1)) : [];
    default:
      return [];
  }
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost));
    }
    prev = row;
  }
  return prev[b.length] as number;
}

/** The reason for `key`, unknown at `path` of `schema`, with a suggestion from the keys the schema accepts there. */
export function unknownKeyReason(schema: unknown, path: readonly PropertyKey[], key: string): string {
  return unknownFieldReason(key, [...new Set(knownKeysAt(schema, path))]);
}

/** `unknown field (did you mean "bake"?)` when one of `known` is close to `key`. */
export function unknownFieldReason(key: string, known: readonly string[]): string {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const candidate of known) {
    // The distance is at least the difference in length: skip hopeless candidates, so that a
    // long key costs nothing and each suggestion stays small.
    if (Math.abs(key.length - candidate.length) >= bestDistance) continue;
    const d = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best ? `unknown field (did you mean "${best}"?)` : 'unknown field';
}
