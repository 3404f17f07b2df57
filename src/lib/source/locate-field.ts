/**
 * Where a field stands in a YAML document: a schema's issue names a path (`select[0].ids`), the
 * operator needs a line and a column in the file as written. A missing field points at its
 * parent, a present one at its key, and an index the schema added to a single value is dropped.
 */
import { type Document, isCollection, isNode, isSeq, LineCounter, parseDocument } from 'yaml';

/** `a.b[0].c`: a path as an operator reads it. */
export function formatFieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

/** The position (yaml's 1-based line and col) of the field at `path`, or of its nearest present parent. */
export function positionOf(doc: Document, counter: LineCounter, path: readonly PropertyKey[]) {
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
export function alignPath(doc: Document, path: readonly PropertyKey[]): PropertyKey[] {
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
