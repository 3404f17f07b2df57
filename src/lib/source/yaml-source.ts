/**
 * Reads a YAML or JSON document and validates it with a zod schema, reporting every problem
 * with its file, line, column and field, so that an operator can fix a policy or fleet file
 * without guessing. Uses the `yaml` package because it keeps source positions for every node.
 *
 * This module composes the steps; each job has its own file: the limits (source-limits.ts), a
 * composer that bounds nesting (compose-bounded.ts), positions of fields (locate-field.ts),
 * "did you mean" (unknown-field-reason.ts) and the one ConfigError per file (issues-error.ts).
 */
import { readFileSync } from 'node:fs';
import { type Alias, type Document, isAlias, isMap, isNode, isScalar, isSeq, LineCounter } from 'yaml';
import type { z } from 'zod';
import { ConfigError, type SourceIssue } from '../errors.js';
import { composeBounded } from './compose-bounded.js';
import { clipReason, issueAt, issuesError } from './issues-error.js';
import { alignPath, formatFieldPath, positionOf } from './locate-field.js';
import { MAX_ALIAS_COUNT, MAX_ISSUES } from './source-limits.js';
import { unknownKeyReason } from './unknown-field-reason.js';

export { formatFieldPath, locateField } from './locate-field.js';
export { MAX_ISSUES, MAX_NESTING, MAX_REASON_LENGTH } from './source-limits.js';
export { unknownFieldReason } from './unknown-field-reason.js';

export interface ParsedSource<T> {
  value: T;
  file: string;
}

export interface ParseSourceOptions {
  /**
   * When set, every anchor (`&a`) and alias (`*a`) is refused, at its line, with this reason:
   * for files where they buy little and cost much (one alias can stand for millions of values,
   * and an error inside an aliased value would point at the anchor, not at the alias). Default:
   * allowed, with at most 100 alias expansions.
   */
  refuseAliases?: string;
}

/** A node reached by `walk`, with the way to it. */
interface Visit {
  node: unknown;
  parent?: Visit;
  key?: string | number;
  /** Where to report it: the node's start, or its anchor's. */
  offset: number;
}

const pathOf = (visit: Visit): (string | number)[] => {
  const path: (string | number)[] = [];
  for (let at: Visit | undefined = visit; at?.parent; at = at.parent) path.push(at.key as string | number);
  return path.reverse();
};

const startOf = (node: unknown): number | undefined =>
  isNode(node) && node.range ? node.range[0] : undefined;

/**
 * One pass over the composed document, without recursion: duplicate keys (with a set per map),
 * aliases and anchors, each with its position, in the order of the file.
 */
function walk(doc: Document.Parsed, text: string) {
  const duplicates: number[] = [];
  const aliases: Visit[] = [];
  const anchors: (Visit & { name: string })[] = [];
  const stack: Visit[] = [{ node: doc.contents, offset: startOf(doc.contents) ?? 0 }];
  for (let visit = stack.pop(); visit; visit = stack.pop()) {
    const { node } = visit;
    if (isAlias(node)) {
      aliases.push(visit);
      continue;
    }
    const anchor = isNode(node) ? node.anchor : undefined;
    if (anchor) {
      // The node's range starts after its properties; report the `&name` itself.
      const at = text.lastIndexOf(`&${anchor}`, visit.offset);
      anchors.push({
        ...visit,
        name: anchor,
        offset: at >= 0 && visit.offset - at < 1000 ? at : visit.offset,
      });
    }
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : '?';
        if (isScalar(pair.key)) {
          if (seen.has(key)) duplicates.push(startOf(pair.key) ?? visit.offset);
          seen.add(key);
        } else if (pair.key !== null)
          stack.push({ node: pair.key, parent: visit, key, offset: startOf(pair.key) ?? visit.offset });
        if (pair.value !== null)
          stack.push({ node: pair.value, parent: visit, key, offset: startOf(pair.value) ?? visit.offset });
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => {
        stack.push({ node: item, parent: visit, key: index, offset: startOf(item) ?? visit.offset });
      });
    }
  }
  const byOffset = (a: { offset: number }, b: { offset: number }) => a.offset - b.offset;
  return { duplicates, aliases: aliases.sort(byOffset), anchors: anchors.sort(byOffset) };
}

/** The aliases of the document that refer to no anchor before them. */
function unresolved(aliases: readonly Visit[], anchors: readonly (Visit & { name: string })[]): Visit[] {
  const first = new Map<string, number>();
  for (const a of anchors) if (!first.has(a.name)) first.set(a.name, a.offset);
  return aliases.filter((v) => {
    const at = first.get((v.node as Alias).source);
    return at === undefined || at > v.offset;
  });
}

/**
 * Parses `text` (YAML or JSON) as if read from `file` and validates it with `schema`. Every
 * problem (syntax, duplicate key, alias, nesting, schema) is a ConfigError naming file, line,
 * column and field; at most MAX_ISSUES are listed. Work is linear in the text's length.
 */
export function parseSource<S extends z.ZodType>(
  file: string,
  text: string,
  schema: S,
  options: ParseSourceOptions = {},
): z.infer<S> {
  const counter = new LineCounter();
  const doc = composeBounded(file, text, counter);
  const at = (offset: number | undefined, field: string, reason: string) =>
    issueAt(file, counter, offset, field, reason);
  const { duplicates, aliases, anchors } = walk(doc, text);
  const syntax: SourceIssue[] = [
    // linePos is only filled in with prettyErrors, so the position comes from the offset.
    ...doc.errors.map((e) => at(e.pos[0], '', e.message.split('\n')[0] ?? e.message)),
    ...duplicates.map((offset) => at(offset, '', 'Map keys must be unique')),
  ];
  if (syntax.length > 0) throw issuesError(syntax);
  const field = (v: Visit) => formatFieldPath(pathOf(v));
  if (options.refuseAliases !== undefined) {
    const reason = options.refuseAliases;
    const found = [...anchors, ...aliases].map((v) => at(v.offset, field(v), reason));
    if (found.length > 0) throw issuesError(found);
  } else {
    const dangling = unresolved(aliases, anchors).map((v) => {
      const name = (v.node as Alias).source;
      return at(v.offset, field(v), `alias *${name} refers to no anchor (&${name}) above it`);
    });
    if (dangling.length > 0) throw issuesError(dangling);
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    // yaml counts alias expansions as it goes; anything else here is unforeseen, but still this file's.
    const message = (err as Error)?.message ?? String(err);
    const first = aliases[0];
    const reason = /alias/i.test(message)
      ? `aliases expand to too many values (at most ${MAX_ALIAS_COUNT} expansions): write the values out`
      : `cannot be read: ${message}`;
    throw issuesError([at(first?.offset, first ? field(first) : '', reason)]);
  }
  const result = schema.safeParse(data ?? {});
  if (result.success) return result.data;
  // Expanded lazily and cut at MAX_ISSUES + 1: a map of 30,000 unknown keys is one zod issue, and
  // locating each key walks its map.
  const found: { path: readonly PropertyKey[]; reason: () => string }[] = [];
  let total = 0;
  const add = (path: readonly PropertyKey[], reason: () => string) => {
    if (total++ <= MAX_ISSUES) found.push({ path, reason });
  };
  for (const issue of result.error.issues) {
    // An unknown key is reported at the key itself, one issue per key, with a suggestion.
    if (issue.code === 'unrecognized_keys')
      for (const key of issue.keys)
        add([...issue.path, key], () => unknownKeyReason(schema, issue.path, key));
    else add(issue.path, () => issue.message);
  }
  const locate = ({ path: schemaPath, reason }: (typeof found)[number]): SourceIssue => {
    const path = alignPath(doc, schemaPath);
    const pos = positionOf(doc, counter, path);
    return {
      file,
      line: pos?.line ?? 1,
      column: pos?.col ?? 1,
      field: formatFieldPath(path),
      reason: clipReason(reason()),
    };
  };
  const listed = found.slice(0, MAX_ISSUES).map(locate);
  const next = found[MAX_ISSUES];
  throw issuesError(listed, next && { count: total - MAX_ISSUES, at: locate(next) });
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
