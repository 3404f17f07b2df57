/**
 * The ring examples of the docs are policies the code reads as the text says (#21): the three
 * rings of README.md (one policy per line) and of docs/policy.md "Version targets, rings and known
 * issues" (files separated by `---`) are valid, each following the one before.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { Policy } from '../../../src/policy/schema.js';

/** The first ```yaml block of `file` after `marker`. */
function yamlAfter(file: string, marker: string): string {
  const doc = readFileSync(file, 'utf8');
  const at = doc.indexOf(marker);
  expect(at, `${file} has ${marker}`).toBeGreaterThan(0);
  const block = /```yaml\n([\s\S]*?)```/.exec(doc.slice(at))?.[1];
  expect(block, `a yaml block after ${marker}`).toBeDefined();
  return block as string;
}

const chain = (policies: Policy[]) => policies.map((p) => [p.name, p.after?.policy ?? null]);

describe('ring examples', () => {
  it('README.md: staging, canary after staging, production after canary (one policy per line)', () => {
    const lines = yamlAfter('README.md', 'Release rings, one policy per file').trim().split('\n');
    const policies = lines.map((l) => Policy.parse(parseAllDocuments(l)[0]?.toJS()));
    expect(chain(policies)).toEqual([
      ['staging', null],
      ['canary', 'staging'],
      ['production', 'canary'],
    ]);
    expect(policies[1]?.after?.soak).toBe(86_400_000);
    expect(policies[2]?.minAge).toBe(14 * 86_400_000);
  });

  it('docs/policy.md: the three files of the rings, and the known issues', () => {
    const docs = parseAllDocuments(
      yamlAfter('docs/policy.md', '## Version targets, rings and known issues'),
    ).map((d) => Policy.parse(d.toJS()));
    expect(chain(docs)).toEqual([
      ['staging', null],
      ['canary', 'staging'],
      ['production', 'canary'],
    ]);
    const production = docs[2] as Policy;
    expect(production.after?.require.verifiedRatio).toBe(0.95);
    expect(production.knownIssues?.[0]).toMatchObject({
      action: 'skip',
      note: 'stops until restarted by hand',
    });
    expect(production.complianceAlert).toEqual({ below: 0.95, for: 7 * 86_400_000 });
    const issues = parseAllDocuments(yamlAfter('docs/policy.md', '### Known issues'))[0]?.toJS() as {
      knownIssues: unknown;
    };
    expect(Policy.parse({ name: 'x', ...issues }).knownIssues?.map((i) => i.action)).toEqual([
      'skip',
      'manual',
    ]);
  });
});
