/**
 * The static check of policy regular expressions (src/policy/select/check-safe-pattern.ts): the shapes
 * known to blow up are refused, the patterns operators write are accepted, and what is accepted
 * matches a long adversarial message quickly (within the classifier's 2,000-character cap).
 */
import { describe, expect, it } from 'vitest';
import {
  BACK_REFERENCE,
  checkSafePattern,
  NESTED_REPETITION,
  OVERLAPPING_REPETITIONS,
} from '../../../src/policy/select/check-safe-pattern.js';

const ACCEPTED = [
  'no space left',
  '\\bnot\\s+enough\\s+disk\\s+space\\b',
  'blocked by .*(defender|crowdstrike)',
  '(disk|volume) (is )?full',
  '(?:error|fail)(?:ed|ure)?: \\d+',
  '^Upgrade failed: ERR-\\d{2,4}$',
  '(?:ab)?c*',
  '(a+)?',
  '(a|b){1}',
  '[(*+]+ literal brackets \\( \\) \\*',
  '[^,]* before a comma',
  'a{2}b{3,}c{1,5}',
  'x{ literal brace',
  '(?<word>\\w+) named group',
  '(?=look)ahead(?!not)',
  '(?<=behind)x',
  'ERR-\\d+\\.\\d{2}',
  'error[^;]*;.*download',
  '\\s*(?:foo)\\s*x',
  '\\w+\\s+\\w+',
  '\\x41+\\u0042+',
  '(?:\\s|x)?\\s*(?:a|b)\\s*',
];

const REFUSED: [string, string][] = [
  ['(a+)+$', NESTED_REPETITION],
  ['(a*)*', NESTED_REPETITION],
  ['(a|aa)+', NESTED_REPETITION],
  ['(?:x\\s*)+y', NESTED_REPETITION],
  ['((ab)+c)*', NESTED_REPETITION],
  ['(a+){2,}', NESTED_REPETITION],
  ['(a+){1,10}', NESTED_REPETITION],
  ['((a|b)c)*', NESTED_REPETITION],
  ['(\\w)\\1', BACK_REFERENCE],
  ['(?<q>[\'"]).*\\k<q>', BACK_REFERENCE],
  ['.*.*x', OVERLAPPING_REPETITIONS],
  ['error.*timeout.+download', OVERLAPPING_REPETITIONS],
  ['[^x]*y\\S+', OVERLAPPING_REPETITIONS],
  ['(?:.)*z.*', OVERLAPPING_REPETITIONS],
  ['\\s*\\s*x', OVERLAPPING_REPETITIONS],
  ['\\s+\\s*\\s+x', OVERLAPPING_REPETITIONS],
  ['\\w+x\\w+!', OVERLAPPING_REPETITIONS],
  ['[a-z]+\\d*[a-z0-9]+', OVERLAPPING_REPETITIONS],
  ['\\s*(?:foo)?\\s*x', OVERLAPPING_REPETITIONS],
  ['\\s*(?:a|\\s)\\s*x', OVERLAPPING_REPETITIONS],
  ['error[^;]{0,80}timeout.*download', OVERLAPPING_REPETITIONS],
  ['A+a+', OVERLAPPING_REPETITIONS],
];

describe('checkSafePattern', () => {
  it('accepts the patterns operators write', () => {
    expect(ACCEPTED.map((p) => [p, checkSafePattern(p)])).toEqual(ACCEPTED.map((p) => [p, undefined]));
  });

  it('refuses nested repetition, back-references and overlapping repetitions', () => {
    expect(REFUSED.map(([p]) => [p, checkSafePattern(p)])).toEqual(REFUSED);
  });

  it('lets no accepted pattern take long on 2,000 adversarial characters', () => {
    const inputs = ['a', ' ', 'x', '(', 'ab', 'disk ', '0', 'foo ', 'error;', 'ERR-1.'].map((s) =>
      s.repeat(2000).slice(0, 2000),
    );
    const started = performance.now();
    for (const pattern of ACCEPTED) {
      const regex = new RegExp(pattern, 'i');
      for (const input of inputs) regex.test(input);
    }
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
