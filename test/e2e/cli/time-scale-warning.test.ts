/**
 * A rehearsal whose time scale is not the simulator's, through the built CLI (run `npm run build`
 * first) against the simulator over HTTP: the simulator tells its scale on every answer
 * (X-Simulator-Time-Scale, and in /_sim/stats); `run` at another scale says so once, in one log
 * line naming both scales and what to set; at the same scale it says nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import { exitOf, type Harness, startHarness } from '../../support/rollout-harness.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const fleet: FleetFileInput = {
  builds: ['19.400-5', '19.470-4'],
  users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
  collectors: [1, 2, 3].map((id) => ({
    id,
    version: '19.400-5',
    outcome: 'succeed' as const,
    upgradeSeconds: 30,
  })),
  behaviour: { incrementalAbove: 0 },
};

const WARNING = /time scale differs from the simulator's/;

function warnings(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((l) => WARNING.test(l))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function until(what: string, check: () => Promise<boolean>, limitMs: number, show: () => string) {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`${what} not seen within ${limitMs} ms:\n${show().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the time scale of a rehearsal', () => {
  it('the simulator tells its scale on every answer, errors and introspection included', async () => {
    harness = await startHarness({ fleet, timeScale: 60, policy: { name: 'all' } });
    const { sim } = harness;
    const unauthorized = await fetch(`${sim.baseUrl}/collectors/upgrades/targets`);
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('x-simulator-time-scale')).toBe('60');
    const stats = await fetch(`${sim.url}/_sim/stats`);
    expect(stats.headers.get('x-simulator-time-scale')).toBe('60');
    expect(((await stats.json()) as { timeScale: number }).timeScale).toBe(60);
  });

  it('run at scale 1 against a simulator at 60: one warning naming both scales and what to set', async () => {
    harness = await startHarness({ fleet, timeScale: 60, policy: { name: 'all' } });
    const h = harness;
    h.env.FLEET_UPGRADE_TIME_SCALE = '1'; // forgotten: the default
    const run = h.spawnCli(['run', '--policy', h.policyFile, '--listen', '127.0.0.1:0']);
    // Many answers later (the targets, a listing, three creates), still one warning.
    await until('tasks created', async () => (await h.simStats()).tasksCreated >= 3, 30_000, run.output);
    expect((await h.simStats()).requests.total).toBeGreaterThanOrEqual(5);
    const told = warnings(run.output());
    expect(told, run.output()).toHaveLength(1);
    expect(told[0]).toMatchObject({
      level: 40,
      timeScale: 1,
      simulatorTimeScale: 60,
      set: 'FLEET_UPGRADE_TIME_SCALE=60',
    });
    expect(told[0]?.msg).toMatch(
      /start again with FLEET_UPGRADE_TIME_SCALE \(or --time-scale\) set to the simulator's, under a new FLEET_UPGRADE_KEY_PREFIX/,
    );
    run.kill('SIGTERM');
    expect(await exitOf(run, 20_000)).toBe(0);

    // Done as it says: the rehearsal runs, and nothing is said any more.
    h.env.FLEET_UPGRADE_TIME_SCALE = '60';
    h.env.FLEET_UPGRADE_KEY_PREFIX = `${h.env.FLEET_UPGRADE_KEY_PREFIX}again:`;
    const again = h.spawnCli(['run', '--once', '--policy', h.policyFile, '--listen', '127.0.0.1:0']);
    expect(await exitOf(again, 60_000), again.output()).toBe(0);
    expect(warnings(again.output())).toEqual([]);
  }, 120_000);

  it('run at the simulator’s scale says nothing about it', async () => {
    harness = await startHarness({ fleet, timeScale: 60, policy: { name: 'all' } });
    const h = harness;
    const run = h.spawnCli(['run', '--once', '--policy', h.policyFile, '--listen', '127.0.0.1:0']);
    expect(await exitOf(run, 60_000)).toBe(0);
    expect(warnings(run.output())).toEqual([]);
  }, 90_000);
});
