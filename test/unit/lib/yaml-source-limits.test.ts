/**
 * parseSource on hostile or careless input: aliases that resolve to nothing or to billions of
 * nodes, nesting deep enough to exhaust the stack, and maps with tens of thousands of keys. Each
 * must end in a ConfigError that names the file and the line, cheaply.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MAX_ISSUES, MAX_NESTING, parseSource } from '../../../src/lib/source/yaml-source.js';
import { configError } from '../../support/config-error.js';
import { aliasBomb } from './hostile-yaml.js';

const Schema = z.strictObject({
  name: z.string(),
  items: z.array(z.unknown()).optional(),
  tags: z.record(z.string(), z.unknown()).optional(),
});

describe('parseSource: aliases', () => {
  it('an alias to an anchor that does not exist names file, line, column and the alias', () => {
    const err = configError(() => parseSource('f.yaml', 'items: [1]\nname: *a\n', Schema));
    expect(err.message).toBe('f.yaml:2:7: name: alias *a refers to no anchor (&a) above it');
  });

  it('an alias bomb is refused with the file and line of an alias, without expanding it', () => {
    const err = configError(() => parseSource('bomb.yaml', aliasBomb(9), Schema));
    expect(err.issues[0]).toMatchObject({ file: 'bomb.yaml', line: 3 });
    expect(err.issues[0]?.reason).toMatch(/aliases expand to too many values/);
  });

  it('a harmless alias still works where aliases are allowed', () => {
    const value = parseSource('f.yaml', 'name: &n web\nitems: [*n]\n', Schema);
    expect(value).toEqual({ name: 'web', items: ['web'] });
  });
});

describe('parseSource: nesting', () => {
  it.each([
    ['flow sequences', `items: ${'['.repeat(100_000)}${']'.repeat(100_000)}`],
    ['flow maps', `items: [${'{a: '.repeat(50_000)}1${'}'.repeat(50_000)}]`],
    ['block sequences', `items:\n  ${'- '.repeat(100_000)}x`],
  ])('%s nested 100,000 deep are refused at their line, with the limit', (_, body) => {
    const err = configError(() => parseSource('deep.yaml', `name: x\n${body}\n`, Schema));
    expect(err.issues).toHaveLength(1);
    expect(err.issues[0]).toMatchObject({ file: 'deep.yaml', line: expect.any(Number) });
    expect(err.issues[0]?.line).toBeGreaterThanOrEqual(2);
    expect(err.issues[0]?.reason).toBe(`nested deeper than ${MAX_NESTING} levels`);
  });

  it(`accepts ${MAX_NESTING} levels`, () => {
    const items = `${'['.repeat(MAX_NESTING - 1)}${']'.repeat(MAX_NESTING - 1)}`;
    expect(parseSource('f.yaml', `name: x\nitems: ${items}\n`, Schema).name).toBe('x');
  });
});

describe('parseSource: many problems', () => {
  const unknownKeys = (n: number) =>
    `name: x\n${Array.from({ length: n }, (_, i) => `k${i}: 1`).join('\n')}\n`;

  it(`lists at most ${MAX_ISSUES} problems and counts the rest, at the line of the first one left out`, () => {
    const err = configError(() => parseSource('many.yaml', unknownKeys(20_000), Schema));
    expect(err.issues).toHaveLength(MAX_ISSUES + 1);
    expect(err.issues[0]).toMatchObject({ line: 2, column: 1, field: 'k0', reason: 'unknown field' });
    expect(err.issues[MAX_ISSUES]).toMatchObject({
      file: 'many.yaml',
      line: MAX_ISSUES + 2,
      field: '',
      reason: `and ${20_000 - MAX_ISSUES} more problems (fix the ones above first)`,
    });
  });

  it('checks a 250 KB map of unknown keys (and its duplicate key) in linear time', () => {
    const text = `${unknownKeys(30_000)}k5: 2\n`;
    const started = performance.now();
    const err = configError(() => parseSource('big.yaml', text, Schema));
    const elapsed = performance.now() - started;
    expect(err.issues).toEqual([
      { file: 'big.yaml', line: 30_002, column: 1, field: '', reason: 'Map keys must be unique' },
    ]);
    // The quadratic checks took minutes here; the linear ones about a second (the YAML parser's own
    // time), so the bound is generous.
    expect(elapsed).toBeLessThan(10_000);
  });

  it('shortens a reason that quotes a huge value', () => {
    const Named = z.strictObject({ name: z.string({ error: (iss) => `got ${JSON.stringify(iss.input)}` }) });
    const err = configError(() => parseSource('f.yaml', `name: [${'1,'.repeat(20_000)}1]\n`, Named));
    expect(err.issues[0]?.reason.length).toBeLessThanOrEqual(300);
    expect(err.issues[0]?.reason).toMatch(/^got \[1,1,.*…$/);
  });
});
