import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listPolicyFiles, loadPolicies } from '../../../src/policy/load/load-policies.js';
import { configError } from '../../support/config-error.js';
import { usePolicyDir, yaml } from '../../support/policy-dir.js';

const dir = usePolicyDir();

describe('loadPolicies', () => {
  it('loads every *.yaml and *.yml of a folder in name order, skipping hidden and other files', () => {
    dir.write('b.yml', yaml('name: bravo'));
    dir.write('a.yaml', yaml('name: alpha'));
    dir.write('.#a.yaml', 'not: [yaml');
    dir.write('notes.txt', 'not a policy');
    const loaded = loadPolicies({ dir: dir.dir });
    expect(loaded.map((l) => [l.policy.name, l.file])).toEqual([
      ['alpha', join(dir.dir, 'a.yaml')],
      ['bravo', join(dir.dir, 'b.yml')],
    ]);
  });

  it('loads explicit files in their order, each once', () => {
    const a = dir.write('a.yaml', yaml('name: alpha'));
    const b = dir.write('b.yaml', yaml('name: bravo'));
    const loaded = loadPolicies({ files: [b, a, join(dir.dir, '.', 'b.yaml')] });
    expect(loaded.map((l) => l.policy.name)).toEqual(['bravo', 'alpha']);
  });

  it('refuses duplicate names across files, naming both files and the line of the name', () => {
    const a = dir.write('a.yaml', yaml('name: web'));
    const b = dir.write('b.yaml', yaml('# the same name again', 'target: latest', 'name: web'));
    const err = configError(() => loadPolicies({ dir: dir.dir }));
    expect(err.message).toBe(`${b}:3:1: name: duplicate policy name "web" (also in ${a})`);
    expect(err.issues).toEqual([
      { file: b, line: 3, column: 1, field: 'name', reason: `duplicate policy name "web" (also in ${a})` },
    ]);
  });

  it('collects the problems of every file into one error', () => {
    const a = dir.write('a.yaml', yaml('name: a', 'pageSize: 0'));
    const b = dir.write('b.yaml', yaml('name: b', 'taskTimeout: 30'));
    dir.write('c.yaml', yaml('name: c'));
    const err = configError(() => loadPolicies({ dir: dir.dir }));
    expect(err.issues.map((i) => `${i.file}:${i.line}:${i.field}`)).toEqual([
      `${a}:2:pageSize`,
      `${b}:2:taskTimeout`,
    ]);
  });

  it('names a missing file and a missing folder', () => {
    const missing = join(dir.dir, 'nope.yaml');
    expect(configError(() => loadPolicies({ files: [missing] })).message).toBe(`${missing}: file not found`);
    const noDir = join(dir.dir, 'absent');
    expect(configError(() => listPolicyFiles(noDir)).message).toBe(`${noDir}: policy folder not found`);
  });

  it('refuses an empty file as a policy without a name, at its first line', () => {
    const file = dir.write('empty.yaml', '');
    expect(configError(() => loadPolicies({ files: [file] })).message).toBe(
      `${file}:1:1: name: required field is missing`,
    );
  });

  it('returns nothing for an empty folder', () => {
    expect(loadPolicies({ dir: dir.dir })).toEqual([]);
  });
});
