/**
 * A cheap static check of a regular expression that an operator writes in a policy
 * (`failureCauses.patterns[].match`), run before the pattern is ever matched. JavaScript's regex
 * engine backtracks, and a pattern matched on the one leader's tick must not stall it: `(a+)+$`
 * takes minutes on 30 characters, and even `\s*\s*x` takes seconds on 2,000 spaces.
 *
 * Refused (each the cause of a known blow-up):
 * - a repeated group whose body itself repeats or has alternatives: `(a+)+`, `(a|ab)*`,
 *   `(?:x\s*)+` (exponential time);
 * - back-references `\1`, `\k<name>` (matching with them is not bounded at all);
 * - two repetitions that can match the same characters one after the other, with nothing
 *   required between them that the first could not match too: `\s*\s*`, `.*foo.*`, `\w+x\w+`
 *   (each such pair multiplies the time of a search by the message's length). Repetitions
 *   separated by text the first cannot match, as in `not\s+enough\s+disk`, are fine.
 * The third rule compares the characters (ASCII and a few others, case-insensitively) that each
 * atom matches; it reads groups as sequences, which errs on the side of refusing. The classifier
 * also matches only the first 2,000 characters of a message (worker/classify-failure.ts), so
 * that an accepted pattern (at most one repetition that overlaps the search itself) stays in
 * milliseconds. Neither input is an attacker's (the pattern is the operator's, the message the
 * service's): the check is there for the accidental catastrophic pattern.
 */

/** Which probe characters an atom matches (see PROBES). */
type Charset = readonly boolean[];

// ASCII and some characters beyond it, for the atoms that match those (`.`, `[^…]`, `\S`, `\s`).
const PROBES = [
  ...Array.from({ length: 128 }, (_, code) => String.fromCharCode(code)),
  ...'éßΩж中\u00a0\u2028\ufeff',
];

interface Frame {
  /** The group's body contains a repetition (a quantifier whose maximum is above 1). */
  repeats: boolean;
  /** The group's body contains `|`. */
  alternates: boolean;
  /** The characters of all the group's atoms. */
  charset: boolean[];
  /** The live repetitions when the group opened. */
  liveBefore: Charset[];
  /** The live repetitions at the end of each alternative finished so far. */
  ends: Charset[][];
  /** A lookahead or lookbehind: matches no characters. */
  lookaround: boolean;
}

export const NESTED_REPETITION =
  'a repeated group whose body repeats or has alternatives (like (a+)+ or (a|b)*) can take exponential time; repeat the inner part only';
export const BACK_REFERENCE = 'back-references (\\1, \\k<name>) are not allowed';
export const OVERLAPPING_REPETITIONS =
  'two repetitions that can match the same characters one after the other (like \\s*\\s* or .*a.*) can take seconds on a long message; separate them by text the first cannot match, or drop one';

const QUANTIFIER = /^\{(\d+)(,(\d*))?\}/;

/** Reads a quantifier at `i`: its length and its minimum and maximum counts. */
function quantifierAt(source: string, i: number) {
  const c = source[i];
  if (c === '*') return { length: 1, min: 0, max: Number.POSITIVE_INFINITY };
  if (c === '+') return { length: 1, min: 1, max: Number.POSITIVE_INFINITY };
  if (c === '?') return { length: 1, min: 0, max: 1 };
  if (c !== '{') return undefined;
  const m = QUANTIFIER.exec(source.slice(i));
  if (!m) return undefined; // a literal brace (allowed without the u flag)
  const min = Number(m[1]);
  const max = m[2] === undefined ? min : m[3] === '' ? Number.POSITIVE_INFINITY : Number(m[3]);
  return { length: m[0].length, min, max };
}

/** Length of the escape at `i` (`\x41`, `\u0041`, `\cJ`, else two characters). */
function escapeLength(source: string, i: number): number {
  const next = source[i + 1];
  if (next === 'x' && /^[0-9a-f]{2}$/i.test(source.slice(i + 2, i + 4))) return 4;
  if (next === 'u' && /^[0-9a-f]{4}$/i.test(source.slice(i + 2, i + 6))) return 6;
  if (next === 'c' && /^[a-z]$/i.test(source[i + 2] ?? '')) return 3;
  return 2;
}

/** Index just past the character class that starts at `i` (`[`). */
function endOfClass(source: string, i: number): number {
  let j = i + 1;
  while (j < source.length && source[j] !== ']') j += source[j] === '\\' ? 2 : 1;
  return j + 1;
}

/** Length of a group's opening: `(`, `(?:`, `(?=`, `(?!`, `(?<=`, `(?<!`, `(?<name>`. */
function groupOpening(source: string, i: number): number {
  if (source[i + 1] !== '?') return 1;
  const rest = source.slice(i + 2);
  if (rest.startsWith('<=') || rest.startsWith('<!')) return 4;
  if (rest.startsWith('<')) return 3 + Math.max(0, rest.indexOf('>'));
  return 3;
}

const charsets = new Map<string, Charset>();
/** The probe characters that one atom (`a`, `\s`, `[^,]`, `.`) matches, case-insensitively. */
function charsetOf(atom: string): Charset {
  let charset = charsets.get(atom);
  if (!charset) {
    try {
      const regex = new RegExp(`^(?:${atom})$`, 'i');
      charset = PROBES.map((p) => regex.test(p));
    } catch {
      charset = PROBES.map(() => true); // unknown: assume it matches anything
    }
    if (charsets.size >= 10_000) charsets.clear();
    charsets.set(atom, charset);
  }
  return charset;
}

const intersects = (a: Charset, b: Charset) => a.some((x, k) => x && b[k]);

/**
 * Why `source` (a pattern that compiles) is refused, or undefined when it passes the check.
 * See the header for what is refused and why.
 */
export function checkSafePattern(source: string): string | undefined {
  const open = (liveBefore: Charset[], lookaround: boolean): Frame => ({
    repeats: false,
    alternates: false,
    charset: PROBES.map(() => false),
    liveBefore,
    ends: [],
    lookaround,
  });
  const stack: Frame[] = [open([], false)];
  const top = () => stack[stack.length - 1] as Frame;
  // Repetitions that may still be matching characters at this point of the pattern.
  let live: Charset[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i] as string;
    let charset: Charset;
    let liveBefore = live;
    let group: Frame | undefined;
    if (c === '\\') {
      const next = source[i + 1] ?? '';
      if (/[1-9]/.test(next) || next === 'k') return BACK_REFERENCE;
      if (next === 'b' || next === 'B') {
        i += 2; // a word boundary matches no character
        continue;
      }
      const length = escapeLength(source, i);
      charset = charsetOf(source.slice(i, i + length));
      i += length;
    } else if (c === '[') {
      const end = endOfClass(source, i);
      charset = charsetOf(source.slice(i, end));
      i = end;
    } else if (c === '(') {
      stack.push(open(live, /^\(\?<?[=!]/.test(source.slice(i, i + 4))));
      i += groupOpening(source, i);
      continue;
    } else if (c === '|') {
      top().alternates = true;
      top().ends.push(live);
      live = top().liveBefore;
      i++;
      continue;
    } else if (c === '^' || c === '$') {
      i++;
      continue;
    } else if (c === ')' && stack.length > 1) {
      group = stack.pop() as Frame;
      group.ends.push(live);
      const parent = top();
      parent.repeats ||= group.repeats;
      parent.alternates ||= group.alternates;
      charset = group.charset;
      liveBefore = group.liveBefore;
      live = group.lookaround ? group.liveBefore : [...new Set(group.ends.flat())];
      i++;
    } else {
      charset = charsetOf(c.replace(/[.*+?^${}()|[\]\\]/, (s) => (s === '.' ? s : `\\${s}`)));
      i++;
    }
    const quantifier = quantifierAt(source, i) ?? { length: 0, min: 1, max: 1 };
    i += quantifier.length;
    if (quantifier.length > 0 && source[i] === '?') i++; // lazy
    const repeats = quantifier.max > 1;
    if (repeats && group && (group.repeats || group.alternates)) return NESTED_REPETITION;
    if (repeats && liveBefore.some((r) => intersects(r, charset))) return OVERLAPPING_REPETITIONS;
    // A repetition stays live through a required atom only if it could match that atom's text.
    const through = group ? live : liveBefore.filter((r) => intersects(r, charset));
    live = quantifier.min === 0 ? [...new Set([...liveBefore, ...through])] : through;
    if (repeats) {
      live = [...live, charset];
      for (const frame of stack) frame.repeats = true;
    }
    const parent = top();
    charset.forEach((x, k) => {
      if (x) parent.charset[k] = true;
    });
  }
  return undefined;
}
