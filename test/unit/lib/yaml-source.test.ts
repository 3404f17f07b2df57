import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { formatFieldPath, loadSourceFile, parseSource } from '../../../src/lib/source/yaml-source.js';
import { configError } from '../../support/config-error.js';

const Schema = z
  .object({
    name: z.string(),
    items: z.array(z.object({ id: z.number().int(), tag: z.string().optional() }).strict()).default([]),
    nested: z.object({ ratio: z.number().max(1) }).optional(),
  })
  .strict();

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('formatFieldPath', () => {
  it('joins keys with dots and indexes with brackets', () => {
    expect(formatFieldPath(['collectors', 3, 'version'])).toBe('collectors[3].version');
    expect(formatFieldPath(['a', 'b'])).toBe('a.b');
    expect(formatFieldPath([0, 'x'])).toBe('[0].x');
    expect(formatFieldPath([])).toBe('');
  });
});

describe('parseSource', () => {
  it('returns the validated value with defaults applied (YAML)', () => {
    expect(parseSource('f.yaml', 'name: web\nitems:\n  - id: 1\n', Schema)).toEqual({
      name: 'web',
      items: [{ id: 1 }],
    });
    expect(parseSource('f.yaml', 'name: web\n', Schema)).toEqual({ name: 'web', items: [] });
  });

  it('reads JSON too', () => {
    expect(parseSource('f.json', '{"name": "web", "items": [{"id": 2, "tag": "x"}]}', Schema)).toEqual({
      name: 'web',
      items: [{ id: 2, tag: 'x' }],
    });
  });

  it('names the file, the line and column of the key, and the field of a schema error', () => {
    const text = ['name: web', 'items:', '  - id: 1', '  - id: 2.5', '    tag: t', ''].join('\n');
    const err = configError(() => parseSource('fleet.yaml', text, Schema));
    expect(err.code).toBe('FLEET_ERR_CONFIG');
    expect(err.issues).toHaveLength(1);
    expect(err.issues[0]).toMatchObject({ file: 'fleet.yaml', line: 4, column: 5, field: 'items[1].id' });
    expect(err.message).toMatch(/^fleet\.yaml:4:5: items\[1\]\.id: /);
  });

  it('reports every problem, each with its own position', () => {
    const text = ['name: 5', 'nested:', '  ratio: 7', 'extra: true', ''].join('\n');
    const err = configError(() => parseSource('p.yaml', text, Schema));
    const byField = Object.fromEntries(err.issues.map((i) => [i.field, i.line]));
    expect(byField).toMatchObject({ name: 1, 'nested.ratio': 3 });
    expect(err.issues.length).toBe(3);
    expect(err.message.split('\n')).toHaveLength(3);
  });

  it('a missing field points at its parent object', () => {
    const err = configError(() => parseSource('p.yaml', 'items:\n  - id: 1\n', Schema));
    expect(err.issues[0]).toMatchObject({ field: 'name', line: 1 });
  });

  it('a YAML syntax error names the file and line', () => {
    const err = configError(() => parseSource('bad.yaml', 'name: web\nitems: [1, 2\n', Schema));
    expect(err.issues[0]?.file).toBe('bad.yaml');
    expect(err.issues[0]?.line).toBeGreaterThanOrEqual(2);
    expect(err.message).toMatch(/^bad\.yaml:\d+:\d+: /);
  });

  it('a duplicate key is an error, not a silent overwrite', () => {
    const err = configError(() => parseSource('dup.yaml', 'name: a\nname: b\n', Schema));
    expect(err.issues[0]).toMatchObject({ file: 'dup.yaml', line: 2 });
  });

  it('an empty document is validated as an empty object', () => {
    const err = configError(() => parseSource('empty.yaml', '', Schema));
    expect(err.issues[0]?.field).toBe('name');
  });
});

describe('loadSourceFile', () => {
  it('reads and validates a file from disk', () => {
    const dir = mkdtempSync(join(tmpdir(), 'yaml-source-'));
    dirs.push(dir);
    const file = join(dir, 'ok.yaml');
    writeFileSync(file, 'name: web\n');
    expect(loadSourceFile(file, Schema)).toEqual({ name: 'web', items: [] });
  });

  it('a missing file is a ConfigError naming it', () => {
    const file = join(tmpdir(), 'no-such-dir-for-yaml-source', 'x.yaml');
    const err = configError(() => loadSourceFile(file, Schema));
    expect(err.message).toBe(`${file}: file not found`);
    expect(err.issues[0]).toMatchObject({ file, field: '', reason: 'file not found' });
  });
});
