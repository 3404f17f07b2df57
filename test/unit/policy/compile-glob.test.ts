import fc from 'fast-check';
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { compileGlob, globProblem, MAX_GLOB_LENGTH } from '../../../src/policy/select/compile-glob.js';

/** The options the selections used with picomatch before compile-glob.ts. */
const GLOB_OPTIONS = { nocase: true, bash: true, dot: true, strictBrackets: true } as const;

const matches = (pattern: string, text: string) => compileGlob(pattern).match(text);

describe('compileGlob', () => {
  it('* is any text, including none, dots and slashes; ? is one character', () => {
    expect(matches('web-*', 'web-')).toBe(true);
    expect(matches('web-*', 'WEB-7.example.com')).toBe(true);
    expect(matches('team/*', 'team/a/b')).toBe(true);
    expect(matches('*.prod', 'db1.prod')).toBe(true);
    expect(matches('db?.prod', 'db1.prod')).toBe(true);
    expect(matches('db?.prod', 'db12.prod')).toBe(false);
    expect(matches('db?.prod', 'db.prod')).toBe(false);
    expect(matches('a**b', 'a/x/b')).toBe(true);
    expect(matches('*', '')).toBe(true);
  });

  it('classes: lists, ranges, negation with ! or ^, ] first, ignoring case', () => {
    expect(matches('web[12]', 'web2')).toBe(true);
    expect(matches('web[12]', 'web3')).toBe(false);
    expect(matches('web[a-c]', 'WEBB')).toBe(true);
    expect(matches('web[A-C]', 'webb')).toBe(true);
    expect(matches('x[!a]', 'xb')).toBe(true);
    expect(matches('x[!a]', 'xa')).toBe(false);
    expect(matches('x[^a]', 'xA')).toBe(false);
    expect(matches('x[]a]', 'x]')).toBe(true);
    expect(matches('x[\\]]', 'x]')).toBe(true);
    expect(matches('x[a-]', 'x-')).toBe(true);
  });

  it('braces are alternatives, nested or empty; without a comma they are text', () => {
    expect(matches('{web,api}-*', 'api-2')).toBe(true);
    expect(matches('{web,api}-*', 'db-2')).toBe(false);
    expect(matches('a{b,c{d,e}}', 'ace')).toBe(true);
    expect(matches('a{b,c{d,e}}', 'ac')).toBe(false);
    expect(matches('a{,b}c', 'ac')).toBe(true);
    expect(matches('a{,b}c', 'abc')).toBe(true);
    expect(matches('{a}*', '{a}x')).toBe(true);
    expect(matches('{a}*', 'ax')).toBe(false);
  });

  it('a pattern without wildcards is text, compared exactly (ignoring case), escapes removed', () => {
    expect(compileGlob('Web-1').literal).toBe('web-1');
    expect(compileGlob('web\\*').literal).toBe('web*');
    expect(compileGlob('a\\{b,c}').literal).toBe('a{b,c}');
    expect(compileGlob('SumoCollector (prod)').literal).toBe('sumocollector (prod)');
    expect(compileGlob('web-*').literal).toBeUndefined();
    expect(matches('web\\*', 'WEB*')).toBe(true);
    expect(matches('web\\*', 'web1')).toBe(false);
    expect(matches('a\\?*', 'a?b')).toBe(true);
    expect(matches('a\\?*', 'ab')).toBe(false);
  });

  it.each([
    ['web-[1', 'unclosed ['],
    ['{web,api-*', 'unclosed {'],
    ['web\\', 'a \\ at the end escapes nothing'],
    ['web[9-0]', 'the range 9-0 is reversed'],
    ['!web-*', 'a leading ! (negation) is not supported'],
    ['+(a|b)', 'extended globs such as +(a|b)'],
    ['web-@(1|2)', 'extended globs such as +(a|b)'],
    ['[[:digit:]]*', 'character classes such as [[:digit:]]'],
    ['web-{1..3}', 'ranges such as {1..3}'],
    [`${'a'.repeat(MAX_GLOB_LENGTH)}*`, `at most ${MAX_GLOB_LENGTH} characters`],
  ])('refuses %s (%s)', (pattern, problem) => {
    expect(globProblem(pattern)).toContain(problem);
    expect(() => compileGlob(pattern)).toThrow(problem);
  });

  it('accepts plain text of any length, compared exactly', () => {
    const long = 'a'.repeat(2 * MAX_GLOB_LENGTH);
    expect(globProblem(long)).toBeUndefined();
    expect(compileGlob(long).literal).toBe(long);
  });

  it('accepts the documented forms', () => {
    for (const p of ['web-*', 'db?.prod', '[abc]x', '{web,api}-*', 'web\\*', 'a(b)|c', 'a!b', 'x@y*'])
      expect(globProblem(p), p).toBeUndefined();
  });

  it('matches a pathological pattern against a long name in at most (length + 1) × size steps', () => {
    const glob = compileGlob('*a*a*a*a*a*a*a*b');
    for (const length of [45, 1000, 10_000]) {
      const meter = { steps: 0 };
      expect(glob.match('a'.repeat(length), meter)).toBe(false);
      expect(meter.steps).toBeGreaterThan(0);
      expect(meter.steps).toBeLessThanOrEqual((length + 1) * glob.size);
    }
    expect(glob.size).toBeLessThanOrEqual(2 * 16 + 2);
    // Braces do not multiply: the program grows with the pattern's length only.
    const braces = compileGlob('{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}*');
    expect(braces.size).toBeLessThanOrEqual(100);
    const meter = { steps: 0 };
    expect(braces.match('ab'.repeat(5000), meter)).toBe(true);
    expect(meter.steps).toBeLessThanOrEqual(10_001 * braces.size);
  });

  it('agrees with picomatch (the former matcher) on the documented forms', () => {
    const token = fc.constantFrom('a', 'b', '-', '.', '*', '?', '[ab]', '[a-b]', '{a,b}', '{a,-}', 'ab');
    // Not the empty name, `.` or `..`: picomatch's * refuses them (file-system names), ours takes them.
    const text = fc
      .array(fc.constantFrom('a', 'b', '-', '.', 'A'), { minLength: 1, maxLength: 8 })
      .map((cs) => cs.join(''));
    fc.assert(
      fc.property(fc.array(token, { minLength: 1, maxLength: 6 }), text, (tokens, name) => {
        fc.pre(name !== '.' && name !== '..');
        const pattern = tokens.join('');
        // picomatch answers `*.*` through a fast path that wants a character after the dot (`a.` does
        // not match), unlike its own general parse of `a*.*` or `*.`, and unlike bash: no oracle there.
        fc.pre(pattern !== '*.*');
        const glob = compileGlob(pattern);
        const ours = glob.literal === undefined ? glob.match(name) : glob.literal === name.toLowerCase();
        expect(ours, `${pattern} ~ ${name}`).toBe(picomatch(pattern, GLOB_OPTIONS)(name));
      }),
      { numRuns: 1500 },
    );
  });
});
