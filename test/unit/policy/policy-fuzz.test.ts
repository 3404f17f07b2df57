/**
 * Property-based tests of the policy loader: the example policies mutated (lines deleted,
 * duplicated or swapped, characters inserted, values nested deep, numbers made huge, anchors
 * and aliases added) and random YAML built from the policy's own field names. Whatever the text,
 * parsePolicyText answers a policy or a ConfigError whose every problem names the file, line and
 * column; nothing escapes. Time is bounded by the inputs' size (a few KB, nesting at most a few
 * thousand levels) and by the loader's limits, not asserted on the wall clock; the output is
 * bounded by MAX_ISSUES whatever the input.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ConfigError } from '../../../src/lib/errors.js';
import { MAX_ISSUES } from '../../../src/lib/source/yaml-source.js';
import { MAX_DURATION_MS } from '../../../src/policy/duration-field.js';
import { type PolicyFileResult, parsePolicyText } from '../../../src/policy/load/load-policies.js';

const FILE = 'fuzz.yaml';
/** FUZZ_RUNS=20 runs twenty times as many cases (a longer search, e.g. before a release). */
const SCALE = Math.max(1, Number(process.env.FUZZ_RUNS ?? 1) || 1);
const runs = (n: number) => ({ numRuns: n * SCALE });
const TIMEOUT = 30_000 * SCALE;
const SEEDS = [
  readFileSync('config/policies/linux-fleet.yaml', 'utf8'),
  readFileSync('config/demo/policy.yaml', 'utf8'),
];
/** Longest message line: file, position, field path and a reason of at most 300 characters. */
const MAX_LINE = FILE.length + 24 + 400 + 300;

/** Every number of a parsed policy is finite (durations within the global cap). */
function finiteNumbers(value: unknown, path = ''): void {
  if (typeof value === 'number') {
    expect(Number.isFinite(value), path).toBe(true);
    expect(Math.abs(value), path).toBeLessThan(Number.MAX_SAFE_INTEGER);
  } else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) finiteNumbers(v, `${path}[${i}]`);
  } else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) finiteNumbers(v, `${path}.${k}`);
}

/** The loader's contract for any text. */
function checkResult(text: string): PolicyFileResult {
  let result: PolicyFileResult;
  try {
    result = parsePolicyText(FILE, text);
  } catch (err) {
    throw new Error(`parsePolicyText threw ${(err as Error)?.constructor?.name}: ${(err as Error)?.message}`);
  }
  if (result.ok) {
    finiteNumbers(result.loaded.policy);
    for (const ms of [result.loaded.policy.taskTimeout, result.loaded.policy.poll.max])
      expect(ms).toBeLessThanOrEqual(MAX_DURATION_MS);
    return result;
  }
  expect(result.error).toBeInstanceOf(ConfigError);
  const { issues, message } = result.error;
  expect(issues.length).toBeGreaterThan(0);
  expect(issues.length).toBeLessThanOrEqual(MAX_ISSUES + 1);
  for (const issue of issues) {
    const where = `${JSON.stringify(issue)} from ${JSON.stringify(text.slice(0, 2000))}`;
    expect(issue.file, where).toBe(FILE);
    expect([typeof issue.line, typeof issue.column], where).toEqual(['number', 'number']);
    expect(Math.min(issue.line ?? 0, issue.column ?? 0), where).toBeGreaterThanOrEqual(1);
    expect(issue.reason.length, where).toBeGreaterThan(0);
  }
  for (const line of message.split('\n')) {
    expect(line).toMatch(/^fuzz\.yaml:\d+:\d+: /);
    expect(line.length).toBeLessThanOrEqual(MAX_LINE);
  }
  return result;
}

type Mutation = (lines: string[]) => string[];

const at = (lines: string[], i: number) => i % Math.max(1, lines.length);
const NOISE = fc.constantFrom(
  ...'[]{}:,-#&*!|>\'"%@`?\t \\'.split(''),
  '\u0000',
  '\ufeff',
  '\u2028',
  'é',
  '💥',
  '---',
  '...',
  '<<: *a',
  ': ',
  '- ',
);

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.nat().map(
    (i): Mutation =>
      (ls) =>
        ls.filter((_, j) => j !== at(ls, i)),
  ),
  fc.nat().map(
    (i): Mutation =>
      (ls) =>
        ls.flatMap((l, j) => (j === at(ls, i) ? [l, l] : [l])),
  ),
  fc.tuple(fc.nat(), fc.nat()).map(
    ([i, k]): Mutation =>
      (ls) => {
        if (ls.length < 2) return ls;
        const out = [...ls];
        const [a, b] = [at(ls, i), at(ls, k)];
        [out[a], out[b]] = [out[b] as string, out[a] as string];
        return out;
      },
  ),
  fc.tuple(fc.nat(), fc.nat(), fc.array(NOISE, { minLength: 1, maxLength: 4 })).map(
    ([i, pos, noise]): Mutation =>
      (ls) =>
        ls.map((l, j) =>
          j === at(ls, i)
            ? l.slice(0, pos % (l.length + 1)) + noise.join('') + l.slice(pos % (l.length + 1))
            : l,
        ),
  ),
  fc.tuple(fc.nat(), fc.string({ maxLength: 20 })).map(
    ([i, s]): Mutation =>
      (ls) =>
        ls.map((l, j) => (j === at(ls, i) ? l + s : l)),
  ),
  // Deep nesting of a value, in flow or block style.
  fc.tuple(fc.nat(), fc.integer({ min: 1, max: 3000 }), fc.boolean()).map(
    ([i, depth, flow]): Mutation =>
      (ls) =>
        ls.map((l, j) => {
          if (j !== at(ls, i) || !l.includes(': ')) return l;
          const [key, ...rest] = l.split(': ');
          const value = rest.join(': ');
          return flow
            ? `${key}: ${'['.repeat(depth)}${value}${']'.repeat(depth)}`
            : `${key}:\n  ${'- '.repeat(depth)}${value}`;
        }),
  ),
  // Huge or odd numbers in place of a number.
  fc
    .tuple(
      fc.nat(),
      fc.constantFrom(
        `9${'9'.repeat(400)}`,
        '1e999',
        '-1e999',
        '.inf',
        '.nan',
        '0x7fffffffffffffffff',
        '-0',
        '1e-400',
        `"${'9'.repeat(400)}d"`,
        '0.0000001ms',
      ),
    )
    .map(
      ([i, big]): Mutation =>
        (ls) =>
          ls.map((l, j) => (j === at(ls, i) ? l.replace(/\b\d+(\.\d+)?\b/, big) : l)),
    ),
  // Anchors and aliases, defined or not.
  fc.tuple(fc.nat(), fc.constantFrom('&a ', '*a', '*b', '&a [*a, *a]', '!!binary ', '!custom ')).map(
    ([i, alias]): Mutation =>
      (ls) =>
        ls.map((l, j) => (j === at(ls, i) ? l.replace(': ', `: ${alias}`) : l)),
  ),
  fc.nat().map(
    (i): Mutation =>
      (ls) =>
        ls.slice(0, at(ls, i)),
  ),
);

describe('parsePolicyText on mutated example policies', () => {
  it('the seeds themselves load', () => {
    for (const seed of SEEDS) expect(checkResult(seed).ok).toBe(true);
  });

  it(
    'answers a policy or a ConfigError naming file:line:column, never an exception',
    () => {
      fc.assert(
        fc.property(
          fc.constantFrom(...SEEDS),
          fc.array(mutation, { minLength: 1, maxLength: 5 }),
          (seed, muts) => {
            const text = muts.reduce((ls, m) => m(ls), seed.split('\n')).join('\n');
            checkResult(text);
          },
        ),
        runs(250),
      );
    },
    TIMEOUT,
  );
});

const FIELDS = [
  'name',
  'description',
  'enabled',
  'target',
  'allowDowngrade',
  'select',
  'exclude',
  'maxInFlight',
  'waves',
  'analysis',
  'failureGate',
  'cohorts',
  'failureCauses',
  'windows',
  'schedule',
  'freeze',
  'retry',
  'poll',
  'taskTimeout',
  'api',
  'verify',
  'pageSize',
  'size',
  'bake',
  'approval',
  'hostName',
  'ids',
  'versions',
  'from',
  'below',
  'notAlive',
  'attempts',
  'backoff',
  'until',
  'initial',
  'max',
  'jitter',
  'within',
  'interval',
  'by',
  'maxFailureRatio',
  'minSample',
  'patterns',
  'class',
  'match',
  'actions',
  'start',
  'end',
  'timeZone',
  'days',
  'prometheus',
  'query',
  'condition',
  'count',
  'timeout',
  'headers',
  'maxInflght',
];
const scalar = fc.oneof(
  fc.constantFrom(
    '10m',
    '35m',
    '0s',
    '366d',
    `${'9'.repeat(300)}d`,
    '10%',
    '150%',
    'latest',
    '19.470-4',
    'web-*',
  ),
  fc.constantFrom(
    '*a*a*a*a*b',
    '{a,b',
    '[x',
    '(a+)+$',
    'Linux',
    'collector',
    'Europe/Berlin',
    '22:00',
    '24:00',
  ),
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 12 }),
);
const { tree } = fc.letrec((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('tree'), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom(...FIELDS), tie('tree'), { maxKeys: 5 }),
  ),
}));

describe('parsePolicyText on random YAML', () => {
  it(
    'random documents made of policy field names',
    () => {
      fc.assert(
        fc.property(
          fc.dictionary(fc.constantFrom(...FIELDS), tree, { maxKeys: 8 }),
          fc.boolean(),
          (doc, named) => {
            checkResult(stringify(named ? { name: 'fuzz', ...doc } : doc));
          },
        ),
        runs(150),
      );
    },
    TIMEOUT,
  );

  it(
    'random text',
    () => {
      const chars = fc.oneof(
        NOISE,
        fc.constantFrom('a', 'name', 'waves', '1', '\n', '  ', 'x: '),
        fc.string({ maxLength: 3 }),
      );
      fc.assert(
        fc.property(fc.array(chars, { maxLength: 80 }), (parts) => {
          checkResult(parts.join(''));
        }),
        runs(300),
      );
    },
    TIMEOUT,
  );
});
