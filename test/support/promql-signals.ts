/**
 * `signalsOf(expr)`: the parts of an alert expression that must each return series on real data
 * for the alert to be able to fire. An alert's expression returns series only while it fires,
 * so evaluating it on healthy data proves only that it parses. Its parts prove more: every
 * metric name, label and function it relies on matches what the processes export. The parts are
 * the operands of top-level `and` / `or` / `unless` (without their `on (...)` / `ignoring (...)`),
 * each without a trailing comparison against a number, and `absent(x)` becomes `x`.
 * A deliberately small PromQL scanner: it tracks brackets and quoted strings, nothing more.
 */

/** Top-level (depth 0, outside strings) positions of each character, as a predicate. */
function topLevelMask(expr: string): boolean[] {
  const mask: boolean[] = [];
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < expr.length; i++) {
    const c = expr[i] as string;
    if (quote) {
      mask.push(false);
      if (c === '\\') {
        mask.push(false);
        i++;
      } else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') {
      quote = c;
      mask.push(false);
      continue;
    }
    if (c === '(' || c === '{' || c === '[') {
      mask.push(depth === 0);
      depth++;
      continue;
    }
    if (c === ')' || c === '}' || c === ']') {
      depth--;
      mask.push(depth === 0);
      continue;
    }
    mask.push(depth === 0);
  }
  return mask;
}

/** Splits at top-level set operators, dropping their vector-matching clause. */
export function splitSetOperands(expr: string): string[] {
  const mask = topLevelMask(expr);
  const parts: string[] = [];
  let start = 0;
  const word = /\b(and|or|unless)\b/g;
  for (let m = word.exec(expr); m; m = word.exec(expr)) {
    if (!mask[m.index]) continue;
    const before = expr[m.index - 1];
    const after = expr[m.index + m[0].length];
    // A label or metric name such as `error_or_not` is not an operator.
    if ((before && /[\w:]/.test(before)) || (after && /[\w:]/.test(after))) continue;
    parts.push(expr.slice(start, m.index));
    start = m.index + m[0].length;
  }
  parts.push(expr.slice(start));
  return parts.map((p) =>
    p
      .trim()
      .replace(/^(on|ignoring)\s*\([^)]*\)\s*/, '')
      .trim(),
  );
}

/** Removes a trailing top-level `<op> [bool] <number>`. */
export function stripThreshold(expr: string): string {
  const mask = topLevelMask(expr);
  const m = /(==|!=|>=|<=|>|<)\s*(bool\s+)?[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/.exec(expr);
  if (!m || !mask[m.index]) return expr.trim();
  return expr.slice(0, m.index).trim();
}

/** Index of the bracket closing the one at `open`, or -1. */
function matchingClose(expr: string, open: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let i = open; i < expr.length; i++) {
    const c = expr[i] as string;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'" || c === '`') quote = c;
    else if (c === '(' || c === '{' || c === '[') depth++;
    else if (c === ')' || c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

function stripOuterParens(expr: string): string {
  let e = expr.trim();
  while (e.startsWith('(') && matchingClose(e, 0) === e.length - 1) e = e.slice(1, -1).trim();
  return e;
}

export function signalsOf(expr: string): string[] {
  return splitSetOperands(expr.trim()).map((part) => {
    const e = stripOuterParens(stripThreshold(part));
    const absent = /^absent\s*\(/.exec(e);
    if (absent && matchingClose(e, absent[0].length - 1) === e.length - 1) {
      return stripOuterParens(e.slice(absent[0].length - 1));
    }
    return e;
  });
}
