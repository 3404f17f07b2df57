/**
 * The examples of several organizations in the docs are what the code reads: the settings
 * snippets of README.md and docs/operations.md parse as the settings file's `orgs`, and the policy
 * of docs/policy.md "Organizations" (and the README's canary wave) as a policy that means what the
 * text says.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DaemonConfigFile } from '../../../src/cli/boot/schema.js';
import { Policy } from '../../../src/policy/schema.js';

/** The first ```yaml block of `file` after `heading`. */
function yamlAfter(file: string, heading: string): unknown {
  const doc = readFileSync(file, 'utf8');
  const at = doc.indexOf(`\n${heading}\n`);
  expect(at, `${file} has ${heading}`).toBeGreaterThan(0);
  const block = /```yaml\n([\s\S]*?)```/.exec(doc.slice(at))?.[1];
  expect(block, `a yaml block after ${heading}`).toBeDefined();
  return parse(block as string);
}

describe('settings with orgs', () => {
  it.each([
    ['README.md', '## Several organizations'],
    ['docs/operations.md', '## Several organizations'],
  ])('%s: the snippet is valid settings, each key from a file or a variable', (file, heading) => {
    const settings = DaemonConfigFile.parse(yamlAfter(file, heading));
    expect(settings.orgs?.map((o) => o.name)).toEqual(['staging', 'emea']);
    for (const o of settings.orgs ?? [])
      expect(Boolean(o.accessKeyFile) !== Boolean(o.accessKeyEnv)).toBe(true);
  });
});

describe('policies across organizations', () => {
  it('docs/policy.md "Organizations": every organization, the lab excluded, staging first, 50 per organization', () => {
    const policy = Policy.parse(yamlAfter('docs/policy.md', '## Organizations'));
    expect(policy.orgs).toEqual(['*']);
    expect(policy.exclude).toEqual([{ org: ['lab-*'] }]);
    expect(policy.maxInFlightPerOrg).toBe(50);
    expect(policy.waves[0]).toMatchObject({ select: { org: ['staging'] }, bakeMs: 86_400_000 });
    expect(policy.waves).toHaveLength(2);
  });

  it('README.md: the canary wave of one organization is a valid policy', () => {
    const readme = readFileSync('README.md', 'utf8');
    const waves = /`(waves: \[\{ select: \{ org: staging \}, bake: 1d \}, "100%"\])`/.exec(readme)?.[1];
    expect(waves).toBeDefined();
    const policy = Policy.parse({ name: 'everywhere', ...(parse(waves as string) as object) });
    expect(policy.waves[0]).toMatchObject({ select: { org: ['staging'] } });
  });
});
