/**
 * Reads a YAML or JSON document and validates it with a zod schema, reporting every problem
 * with its file, line, column and field, so that an operator can fix a policy or fleet file
 * without guessing. Uses the `yaml` package because it keeps source positions for every node.
 */
import { readFileSync } from 'node:fs';
import { type Document, isCollection, isNode, LineCounter, parseDocument } from 'yaml';
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
      const pos = e.linePos?.[0];
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
  const issues: SourceIssue[] = result.error.issues.map((issue) => {
    const pos = positionOf(doc, counter, issue.path);
    return {
      file,
      line: pos?.line,
      column: pos?.col,
      field: formatFieldPath(issue.path),
      reason: issue.message,
    };
  });
  throw new ConfigError(issues.map(formatIssue).join('\n'), issues);
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
