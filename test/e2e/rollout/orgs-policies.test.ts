/**
 * Two policy files, each covering one organization (`orgs: [emea]`, `orgs: [us]`), in one
 * `run --policies DIR` of the built CLI (run `npm run build` first) against one simulator that
 * plays both organizations over HTTP, with a real Redis. Each policy upgrades every Collector of
 * its own organization: a policy that comes first in file order claims only the Collectors of the
 * organizations it covers, whatever their ids (here the same ids in both organizations).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type SharedSimOrgs, startSharedSimOrgs } from '../../support/one-sim-orgs-harness.js';
import { exitOf } from '../../support/rollout-harness.js';

let harness: SharedSimOrgs | undefined;
let dir: string | undefined;
afterEach(async () => {
  await harness?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  harness = undefined;
  dir = undefined;
});

const org = (name: string) => ({
  fleet: {
    name,
    builds: ['19.470-4', '19.480-2'],
    users: [{ accessId: `${name}-ops`, accessKey: `${name}-secret` }],
    collectors: Array.from({ length: 4 }, (_, i) => ({
      id: i + 1,
      version: '19.470-4',
      outcome: 'succeed' as const,
      upgradeSeconds: 60,
    })),
    behaviour: { incrementalAbove: 0 },
  },
});

const policy = (name: string, orgs: string[]) => ({
  name,
  orgs,
  maxInFlight: 4,
  verify: false,
  poll: { initial: '20s', max: '1m' },
});

describe('one policy per organization in one run', () => {
  it('each policy upgrades its own organization, the one later in file order too', async () => {
    const h = await startSharedSimOrgs({
      orgs: [org('emea'), org('us')],
      policy: policy('unused', ['us']),
      timeScale: 300,
    });
    harness = h;
    dir = mkdtempSync(join(tmpdir(), 'orgs-policies-'));
    const policies = join(dir, 'policies');
    mkdirSync(policies);
    // emea-fleet comes first in file order; it covers emea only.
    writeFileSync(join(policies, 'emea-fleet.yaml'), stringify(policy('emea-fleet', ['emea'])));
    writeFileSync(join(policies, 'us-fleet.yaml'), stringify(policy('us-fleet', ['us'])));
    const run = h.spawnCli(['run', '--policies', policies, '--listen', '127.0.0.1:0']);
    const seen = await h.waitFor(
      (s) => s.rollouts.length === 2 && s.rollouts.every((r) => r.phase === 'converged'),
      60_000,
    );
    const parts = Object.fromEntries(
      seen.rollouts.map((r) => [r.id, r.byOrg.map((p) => [p.org, p.done, p.total])]),
    );
    expect(parts).toEqual({
      'emea-fleet@19.480-2': [['emea', 4, 4]],
      'us-fleet@19.480-2': [['us', 4, 4]],
    });
    for (const name of ['emea', 'us']) {
      const stats = await h.simStats(name);
      expect(stats.tasksCreated, name).toBe(4);
      expect(stats.tasksByOutcome.succeeded, name).toBe(4);
      const collectors = await h.simCollectors(name);
      expect(
        collectors.map((c) => c.version),
        name,
      ).toEqual(Array(4).fill('19.480-2'));
    }
    run.kill('SIGTERM');
    expect(await exitOf(run, 15_000)).toBe(0);
  }, 90_000);
});
