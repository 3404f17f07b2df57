/**
 * Reads a YAML or JSON document and validates it with a zod schema, reporting every problem
 * with its file, line, column and field, so that an operator can fix a policy or fleet file
 * without guessing. Uses the `yaml` package because it keeps source positions for every node.
 */
import { readFileSync } from 'node:fs';
import {
  type Alias,
  Composer,
  type CST,
  type Document,
  isAlias,
  isCollection,
  isMap,
  isNode,
  isScalar,
  isSeq,
  Lexer,
  LineCounter,
  Parser,
  parseDocument,
  YAMLParseError,
} from 'yaml';
import type { z } from 'zod';
import { ConfigError, formatIssue, type SourceIssue } from '../errors.js';

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

/** Deepest nesting of collections accepted; the parser recurses, and 100,000 levels exhaust its stack. */
export const MAX_NESTING = 64;
/** Problems listed per file; the rest are counted in one last line. */
export const MAX_ISSUES = 50;
/** Longest reason kept (a reason may quote the value it refuses). */
export const MAX_REASON_LENGTH = 300;
/** Alias expansions allowed where aliases are (yaml's own count): a shared block, not a bomb. */
const MAX_ALIAS_COUNT = 100;

export interface ParseSourceOptions {
  /**
   * When set, every anchor (`&a`) and alias (`*a`) is refused, at its line, with this reason:
   * for files where they buy little and cost much (one alias can stand for millions of values,
   * and an error inside an aliased value would point at the anchor, not at the alias). Default:
   * allowed, with at most 100 alias expansions.
   */
  refuseAliases?: string;
}

const clip = (reason: string) =>
  reason.length > MAX_REASON_LENGTH ? `${reason.slice(0, MAX_REASON_LENGTH - 1)}…` : reason;

function issueAt(
  file: string,
  counter: LineCounter,
  offset: number | undefined,
  field: string,
  reason: string,
) {
  const pos = offset === undefined ? undefined : counter.linePos(offset);
  return { file, line: pos?.line ?? 1, column: pos?.col ?? 1, field, reason: clip(reason) };
}

/** One ConfigError for `issues`: in the order of the file, at most MAX_ISSUES and a count of the rest. */
function issuesError(issues: SourceIssue[], more?: { count: number; at: SourceIssue }): ConfigError {
  issues.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
  let listed = issues;
  let rest = more;
  if (!rest && issues.length > MAX_ISSUES) {
    listed = issues.slice(0, MAX_ISSUES);
    rest = { count: issues.length - MAX_ISSUES, at: issues[MAX_ISSUES] as SourceIssue };
  }
  if (rest) {
    const n = rest.count;
    listed.push({
      ...rest.at,
      field: '',
      reason: `and ${n} more problem${n === 1 ? '' : 's'} (fix the ones above first)`,
    });
  }
  return new ConfigError(listed.map(formatIssue).join('\n'), listed);
}

/**
 * The offset of a collection nested deeper than MAX_NESTING in the parser's tokens, found without
 * recursion: composing the document recurses once per level.
 */
function tooDeep(tokens: readonly CST.Token[]): number | undefined {
  const stack: [CST.Token, number][] = tokens.map((token) => [token, 0]);
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [token, depth] = next;
    if (token.type === 'document') {
      if (token.value) stack.push([token.value, depth]);
    } else if (token.type === 'block-map' || token.type === 'block-seq' || token.type === 'flow-collection') {
      if (depth >= MAX_NESTING) return token.offset;
      for (const item of token.items) {
        if (item.key) stack.push([item.key, depth + 1]);
        if (item.value) stack.push([item.value, depth + 1]);
      }
    }
  }
  return undefined;
}

/**
 * The parser's tokens, the nesting bounded as they come: the parser keeps its open collections
 * on `stack` and, when a line closes many at once, recurses once per level (100,000 levels
 * exhaust the stack; a regular expression compiled that deep can even abort the process). So it
 * is fed one lexeme at a time and stopped as soon as it holds more than MAX_NESTING collections
 * (the stack also holds the document and at most one scalar).
 */
function parseTokens(file: string, text: string, counter: LineCounter): CST.Token[] {
  const parser = new Parser(counter.addNewLine);
  counter.addNewLine(0);
  const tokens: CST.Token[] = [];
  for (const lexeme of new Lexer().lex(text)) {
    for (const token of parser.next(lexeme)) tokens.push(token);
    if (parser.stack.length > MAX_NESTING + 2)
      throw issuesError([
        issueAt(file, counter, parser.offset, '', `nested deeper than ${MAX_NESTING} levels`),
      ]);
  }
  for (const token of parser.end()) tokens.push(token);
  return tokens;
}

/** parseDocument, with the nesting bounded before composing and duplicate keys left to `walk`. */
function compose(file: string, text: string, counter: LineCounter): Document.Parsed {
  const tokens = parseTokens(file, text, counter);
  const deep = tooDeep(tokens);
  if (deep !== undefined)
    throw issuesError([issueAt(file, counter, deep, '', `nested deeper than ${MAX_NESTING} levels`)]);
  // uniqueKeys compares each key with every other key of its map: quadratic. walk() uses a set.
  const composer = new Composer({ prettyErrors: false, uniqueKeys: false });
  let doc: Document.Parsed | undefined;
  for (const next of composer.compose(tokens, true, text.length)) {
    if (!doc) doc = next;
    else {
      const range: [number, number] = [next.range[0], next.range[1]];
      doc.errors.push(new YAMLParseError(range, 'MULTIPLE_DOCS', 'Source contains multiple documents'));
      break;
    }
  }
  return doc as Document.Parsed;
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
  const doc = compose(file, text, counter);
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
      reason: clip(reason()),
    };
  };
  const listed = found.slice(0, MAX_ISSUES).map(locate);
  const next = found[MAX_ISSUES];
  throw issuesError(listed, next && { count: total - MAX_ISSUES, at: locate(next) });
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
    // The distance is at least the difference in length: skip hopeless candidates, so that a
    // long key costs nothing and each suggestion stays small.
    if (Math.abs(key.length - candidate.length) >= bestDistance) continue;
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
