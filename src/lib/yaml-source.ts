/**
 * Reads a YAML or JSON document and validates it with a zod schema, reporting every problem
 * with its file, line, column and field, so that an operator can fix a policy or fleet file
 * without guessing. Uses the `yaml` package because it keeps source positions for every node.
 */
import { readFileSync } from 'node:fs';
import { type Document, isCollection, isNode, isSeq, LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { ConfigError, formatIssue, type SourceIssue } from './errors.js';

export function formatFieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

function positionOf(doc: Document, counter: LineCounter, path: readonly PropertyKey[]) {
  // Walk down as far as the path exists, so a missing field points at its parent object.
  for (let depth = path.length; depth >= 0; depth--) {
    const sub = path.slice(0, depth) as (string | number)[];
    const node = depth === 0 ? doc.contents : doc.getIn(sub, true);
    if (isNode(node) && node.range) {
      // For a present key, point at the key rather than at its value when we can.
      if (depth > 0 && depth === path.length) {
        const parent = depth === 1 ? doc.contents : doc.getIn(sub.slice(0, -1), true);
        if (isCollection(parent)) {
          const last = sub[sub.length - 1];
          const pair = parent.items.find(
            (item) =>
              typeof item === 'object' &&
              item !== null &&
              'key' in item &&
              isNode(item.key) &&
              (item.key as { value?: unknown }).value === last,
          ) as { key?: { range?: [number, number, number] } } | undefined;
          if (pair?.key?.range) return counter.linePos(pair.key.range[0]);
        }
      }
      return counter.linePos(node.range[0]);
    }
  }
  return undefined;
}

/** Line and column (1-based) of the field at `path` in a YAML text, for errors found after parsing. */
export function locateField(
  text: string,
  path: readonly PropertyKey[],
): { line: number; column: number } | undefined {
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: false });
  const pos = positionOf(doc, counter, path);
  return pos && { line: pos.line, column: pos.col };
}

/**
 * The path as written in the file: a schema that accepts "one value or a list" reports `[0]`
 * where the file holds a single value, and that index is dropped (`select[0].ids` → `select.ids`).
 */
function alignPath(doc: Document, path: readonly PropertyKey[]): PropertyKey[] {
  const out: PropertyKey[] = [];
  for (const key of path) {
    if (key === 0) {
      const node = out.length === 0 ? doc.contents : doc.getIn(out as (string | number)[], true);
      if (isNode(node) && !isSeq(node)) continue;
    }
    out.push(key);
  }
  return out;
}

export interface ParsedSource<T> {
  value: T;
  file: string;
}

/** Parses `text` (YAML or JSON) as if read from `file` and validates it with `schema`. */
export function parseSource<S extends z.ZodType>(file: string, text: string, schema: S): z.infer<S> {
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const issues: SourceIssue[] = doc.errors.map((e) => {
      // linePos is only filled in with prettyErrors, so the position comes from the offset.
      const pos = e.linePos?.[0] ?? counter.linePos(e.pos[0]);
      return {
        file,
        line: pos?.line,
        column: pos?.col,
        field: '',
        reason: e.message.split('\n')[0] ?? e.message,
      };
    });
    throw new ConfigError(issues.map(formatIssue).join('\n'), issues);
  }
  const data: unknown = doc.toJS({ maxAliasCount: 100 });
  const result = schema.safeParse(data ?? {});
  if (result.success) return result.data;
  const issues: SourceIssue[] = result.error.issues.flatMap((issue) => {
    // An unknown key is reported at the key itself, one issue per key, with a suggestion.
    const located =
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((key) => ({
            path: [...issue.path, key],
            reason: unknownKeyReason(schema, issue.path, key),
          }))
        : [{ path: issue.path, reason: issue.message }];
    return located.map(({ path: schemaPath, reason }) => {
      const path = alignPath(doc, schemaPath);
      const pos = positionOf(doc, counter, path);
      return { file, line: pos?.line, column: pos?.col, field: formatFieldPath(path), reason };
    });
  });
  // In the order of the file, so that an operator fixes them top to bottom.
  issues.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
  throw new ConfigError(issues.map(formatIssue).join('\n'), issues);
}

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

function unknownKeyReason(schema: unknown, path: readonly PropertyKey[], key: string): string {
  return unknownFieldReason(key, [...new Set(knownKeysAt(schema, path))]);
}

/** `unknown field (did you mean "bake"?)` when one of `known` is close to `key`. */
export function unknownFieldReason(key: string, known: readonly string[]): string {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const candidate of known) {
    const d = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best ? `unknown field (did you mean "${best}"?)` : 'unknown field';
}

/** Reads `file` from disk and validates it; a missing or unreadable file is a ConfigError too. */
export function loadSourceFile<S extends z.ZodType>(file: string, schema: S): z.infer<S> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const reason =
      (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (err as Error).message;
    throw new ConfigError(`${file}: ${reason}`, [{ file, field: '', reason }]);
  }
  return parseSource(file, text, schema);
}
