/**
 * The globs of selections (`name`, `hostName`), matched in time proportional to the name's
 * length times the pattern's. A glob compiled to a backtracking regular expression (as picomatch
 * does) takes exponential time on patterns such as `*a*a*a*a*a*a*a*b`: 0.3 s on a 40-character
 * name, 11 s on 60, for every Collector of every scan, on the leader's one thread. Here a glob is
 * a small automaton (Thompson's construction) run on all its states at once: each character of
 * the name visits each instruction at most once, so `match` takes at most
 * (name length + 1) × `size` steps, whatever the pattern. Braces do not multiply: `{a,b}` is one
 * branch point, not a copy of the rest of the pattern per alternative.
 *
 * The syntax is the documented one (docs/policy.md "Selections"), case-insensitive:
 *   `*` any text (also `.` and `/`), `?` one character, `[abc]`, `[a-z]`, `[!a]` or `[^a]` (`]`
 *   first is literal), `{web,api}` alternatives (nested; without a comma the braces are text),
 *   `\` escapes the next character. Every other character matches itself.
 * A pattern without a wildcard is text, compared exactly (escapes removed): see `literal`.
 * Refused, because picomatch gave them a meaning that this matcher would silently change:
 * a leading `!` (negation), extended globs `+(a|b)`, `@(…)`, `!(…)`, `*(…)`, `?(…)`, POSIX
 * classes `[[:digit:]]` and ranges `{1..3}`; and, to bound the automaton, a pattern with any of
 * `* ? [ {` longer than MAX_GLOB_LENGTH characters (plain text of any length is fine).
 */

/** Longest glob (a pattern with `*`, `?`, `[` or `{`) accepted, in characters: a host name has at most 253. */
export const MAX_GLOB_LENGTH = 256;

type Instruction =
  | { op: 'char'; c: string }
  | { op: 'any' }
  | { op: 'class'; negate: boolean; chars: Set<string>; ranges: [number, number][] }
  | { op: 'split'; x: number; y: number }
  | { op: 'jmp'; x: number }
  | { op: 'match' };

/** A compiled glob. */
export interface Glob {
  /** The text itself (lower case, escapes removed) when the pattern has no wildcard; compare exactly. */
  literal?: string;
  /** Instructions of the automaton; `match` takes at most (text length + 1) × size steps. */
  size: number;
  /** Whether the whole `text` matches, ignoring case. `meter.steps` counts the work done. */
  match(text: string, meter?: { steps: number }): boolean;
}

/** A pattern as written: wildcards, classes and brace groups, or literal characters. */
type Item =
  | { kind: 'char'; c: string }
  | { kind: 'star' }
  | { kind: 'any' }
  | { kind: 'class'; negate: boolean; chars: Set<string>; ranges: [number, number][] }
  | { kind: 'alt'; branches: Item[][] };

class GlobError extends RangeError {}

const EXTGLOB = /(^|[^\\])[?*+@!]\(/;

/** Index of the `]` that closes the class opened at `i`, or -1. */
function classEnd(chars: readonly string[], i: number): number {
  let j = i + 1;
  if (chars[j] === '!' || chars[j] === '^') j++;
  if (chars[j] === ']') j++;
  for (; j < chars.length; j++) {
    if (chars[j] === '\\') j++;
    else if (chars[j] === ']') return j;
  }
  return -1;
}

/** Index of the `}` that closes the brace opened at `i` and whether it has a top-level comma. */
function braceEnd(chars: readonly string[], i: number): { end: number; comma: boolean } {
  let depth = 0;
  let comma = false;
  for (let j = i; j < chars.length; j++) {
    const c = chars[j];
    if (c === '\\') j++;
    else if (c === '[') {
      const end = classEnd(chars, j);
      if (end < 0) return { end: -1, comma };
      j = end;
    } else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return { end: j, comma };
    else if (c === ',' && depth === 1) comma = true;
  }
  return { end: -1, comma };
}

function parseClass(chars: readonly string[], start: number, end: number): Item {
  let i = start + 1;
  const negate = chars[i] === '!' || chars[i] === '^';
  if (negate) i++;
  const body = chars.slice(i, end).join('');
  if (body.includes('[:'))
    throw new GlobError('character classes such as [[:digit:]] are not supported: use [0-9]');
  const set = new Set<string>();
  const ranges: [number, number][] = [];
  // classEnd() placed `end` after a leading `]`, so every `]` before it is a literal one.
  while (i < end) {
    let c = chars[i] as string;
    if (c === '\\') c = chars[++i] as string;
    i++;
    if (chars[i] === '-' && i + 1 < end) {
      let to = chars[i + 1] as string;
      i += 2;
      if (to === '\\') to = chars[i++] as string;
      const range: [number, number] = [c.codePointAt(0) as number, to.codePointAt(0) as number];
      if (range[0] > range[1]) throw new GlobError(`the range ${c}-${to} is reversed: write ${to}-${c}`);
      ranges.push(range);
    } else set.add(c.toLowerCase());
  }
  return { kind: 'class', negate, chars: set, ranges };
}

/** Items from `i` until the end or, inside braces, the next `,` or `}` at this level. */
function parseItems(chars: readonly string[], i: number, inBraces: boolean): { items: Item[]; next: number } {
  const items: Item[] = [];
  while (i < chars.length) {
    const c = chars[i] as string;
    if (inBraces && (c === ',' || c === '}')) break;
    if (c === '\\') {
      if (i + 1 >= chars.length)
        throw new GlobError('a \\ at the end escapes nothing: write \\\\ for a backslash');
      items.push({ kind: 'char', c: (chars[i + 1] as string).toLowerCase() });
      i += 2;
    } else if (c === '*') {
      if (items[items.length - 1]?.kind !== 'star') items.push({ kind: 'star' });
      i++;
    } else if (c === '?') {
      items.push({ kind: 'any' });
      i++;
    } else if (c === '[') {
      const end = classEnd(chars, i);
      if (end < 0) throw new GlobError('unclosed [: write \\[ to match the character');
      items.push(parseClass(chars, i, end));
      i = end + 1;
    } else if (c === '{') {
      const { end, comma } = braceEnd(chars, i);
      if (end < 0) throw new GlobError('unclosed {: write \\{ to match the character');
      if (!comma) {
        if (/^\{[^{}]*\.\.[^{}]*\}$/.test(chars.slice(i, end + 1).join('')))
          throw new GlobError('ranges such as {1..3} are not supported: list the values, {1,2,3}');
        items.push({ kind: 'char', c: '{' });
        i++;
        continue;
      }
      const branches: Item[][] = [];
      let j = i + 1;
      for (;;) {
        const branch = parseItems(chars, j, true);
        branches.push(branch.items);
        j = branch.next + 1;
        if (chars[branch.next] === '}') break;
      }
      items.push({ kind: 'alt', branches });
      i = j;
    } else {
      items.push({ kind: 'char', c: c.toLowerCase() });
      i++;
    }
  }
  return { items, next: i };
}

/** Why `pattern` is refused, or undefined when it is a valid glob (or plain text). */
export function globProblem(pattern: string): string | undefined {
  try {
    parse(pattern);
    return undefined;
  } catch (err) {
    if (err instanceof GlobError) return err.message;
    throw err;
  }
}

function parse(pattern: string): Item[] {
  const chars = Array.from(pattern);
  // Only a pattern that may hold wildcards is bounded: plain text is compared in a set.
  if (chars.length > MAX_GLOB_LENGTH && /[*?[{]/.test(pattern))
    throw new GlobError(`a glob must be at most ${MAX_GLOB_LENGTH} characters`);
  if (chars[0] === '!') throw new GlobError('a leading ! (negation) is not supported: use exclude');
  if (EXTGLOB.test(pattern))
    throw new GlobError(
      'extended globs such as +(a|b) are not supported: use {a,b}, or write \\( to match a parenthesis',
    );
  return parseItems(chars, 0, false).items;
}

/** The text of a pattern without wildcards, or undefined. */
function literalOf(items: readonly Item[]): string | undefined {
  return items.every((item) => item.kind === 'char')
    ? items.map((item) => (item as { c: string }).c).join('')
    : undefined;
}

function emit(items: readonly Item[], prog: Instruction[]): void {
  for (const item of items) {
    if (item.kind === 'char') prog.push({ op: 'char', c: item.c });
    else if (item.kind === 'any') prog.push({ op: 'any' });
    else if (item.kind === 'class')
      prog.push({ op: 'class', negate: item.negate, chars: item.chars, ranges: item.ranges });
    else if (item.kind === 'star') {
      const loop = prog.length;
      const split: Instruction = { op: 'split', x: loop + 1, y: 0 };
      prog.push(split, { op: 'any' }, { op: 'jmp', x: loop });
      split.y = prog.length;
    } else {
      const jumps: { op: 'jmp'; x: number }[] = [];
      item.branches.forEach((branch, k) => {
        const last = k === item.branches.length - 1;
        const split: Instruction = { op: 'split', x: prog.length + 1, y: 0 };
        if (!last) prog.push(split);
        emit(branch, prog);
        if (!last) {
          const jump = { op: 'jmp' as const, x: 0 };
          jumps.push(jump);
          prog.push(jump);
          split.y = prog.length;
        }
      });
      for (const jump of jumps) jump.x = prog.length;
    }
  }
}

function accepts(ins: Instruction, lower: string, code: number, upperCode: number): boolean {
  switch (ins.op) {
    case 'char':
      return ins.c === lower;
    case 'any':
      return true;
    case 'class': {
      const hit =
        ins.chars.has(lower) ||
        ins.ranges.some(([lo, hi]) => (code >= lo && code <= hi) || (upperCode >= lo && upperCode <= hi));
      return hit !== ins.negate;
    }
    default:
      return false;
  }
}

/** Compiles `pattern`; throws a RangeError saying why when it is refused (see globProblem). */
export function compileGlob(pattern: string): Glob {
  const items = parse(pattern);
  const literal = literalOf(items);
  const prog: Instruction[] = [];
  emit(items, prog);
  prog.push({ op: 'match' });
  const seen = new Uint32Array(prog.length);
  let generation = 0;
  const size = prog.length;

  /** Adds the consuming instructions reachable from `pc` without input (each once per generation). */
  const follow = (list: number[], pc: number, meter: { steps: number } | undefined) => {
    const stack = [pc];
    for (let at = stack.pop(); at !== undefined; at = stack.pop()) {
      if (seen[at] === generation) continue;
      seen[at] = generation;
      if (meter) meter.steps++;
      const ins = prog[at] as Instruction;
      if (ins.op === 'split') stack.push(ins.y, ins.x);
      else if (ins.op === 'jmp') stack.push(ins.x);
      else list.push(at);
    }
  };

  const match = (text: string, meter?: { steps: number }): boolean => {
    if (generation > 0xfffffff0) {
      seen.fill(0);
      generation = 0;
    }
    generation++;
    let current: number[] = [];
    follow(current, 0, meter);
    for (const ch of text) {
      const lower = ch.toLowerCase();
      const code = lower.codePointAt(0) as number;
      const upperCode = ch.toUpperCase().codePointAt(0) as number;
      generation++;
      const next: number[] = [];
      for (const pc of current) {
        if (accepts(prog[pc] as Instruction, lower, code, upperCode)) follow(next, pc + 1, meter);
      }
      if (next.length === 0) return false;
      current = next;
    }
    return current.some((pc) => prog[pc]?.op === 'match');
  };

  return { ...(literal === undefined ? {} : { literal }), size, match };
}
