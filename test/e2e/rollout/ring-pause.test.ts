/**
 * A ring that turns bad after it released a build (#21): production follows canary; once canary
 * converged on a build, production starts it; then an operator rolls the build back in canary.
 * Production's rollout of it is paused where it runs (`ring: ...`): no task is created there
 * after the pause settles, and `status` says why. Real path: `run` in this process on the real
 * Redis, the simulator over HTTP, the built CLI for the rollback.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { formatStatus } from '../../../src/cli/render/format-status.js';
import type { FleetStatus, RolloutStatus } from '../../../src/rollout/life/index.js';
import { exitOf, type Harness, startHarness } from '../../support/rollout-harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const byId = (s: FleetStatus, id: string) => s.rollouts.find((r) => r.id === id) as RolloutStatus | undefined;

describe('a ring rolled back after it released a build', () => {
  it("pauses the later ring's rollout of that build where it runs", async () => {
    harness = await startHarness({
      timeScale: 600,
      fleet: {
        builds: ['19.400-5', '19.470-4'],
        collectors: Array.from({ length: 12 }, (_, i) => ({
          id: i + 1,
          version: '19.400-5',
          outcome: 'succeed' as const,
          // canary's three quickly; production's one at a time, 10 simulated minutes each.
          upgradeSeconds: i < 3 ? 60 : 600,
        })),
        behaviour: { incrementalAbove: 0 },
      },
      policy: {
        name: 'canary',
        select: { ids: [1, 2, 3] },
        maxInFlight: 3,
        verify: false,
        poll: { initial: '30s', max: '1m' },
      },
    });
    const h = harness;
    const production = join(dirname(h.policyFile), 'production.yaml');
    writeFileSync(
      production,
      stringify({
        name: 'production',
        select: { ids: [4, 5, 6, 7, 8, 9, 10, 11, 12] },
        after: { policy: 'canary' },
        maxInFlight: 1,
        verify: false,
        poll: { initial: '1m', max: '2m' },
      }),
    );
    await h.startRun({ policyFiles: [h.policyFile, production] });
    await h.waitFor((s) => byId(s, 'canary@19.470-4')?.phase === 'converged', 30_000);
    await h.waitFor((s) => (byId(s, 'production@19.470-4')?.counts.succeeded ?? 0) >= 1, 30_000);

    const rollback = h.spawnCli(['rollback', 'canary@19.470-4', '--all']);
    const code = await exitOf(rollback, 30_000);
    expect(code, rollback.output()).toBe(0);

    const paused = await h.waitFor((s) => byId(s, 'production@19.470-4')?.phase === 'paused', 30_000);
    const r = byId(paused, 'production@19.470-4') as RolloutStatus;
    expect(r.pauseReason).toMatch(/^ring: 19\.470-4 was rolled back in canary/);
    // Tasks under way end; then nothing new is created for production.
    await h.waitFor((s) => byId(s, 'production@19.470-4')?.inflight === 0, 30_000);
    const prodTasks = async () =>
      (await h.simCollectors()).filter((c) => c.id >= 4).flatMap((c) => c.tasks).length;
    const before = await prodTasks();
    expect(before).toBeLessThan(9);
    await new Promise((res) => setTimeout(res, 3000)); // 30 simulated minutes: three more upgrades' time
    expect(await prodTasks()).toBe(before);
    expect(byId(await h.status(), 'production@19.470-4')?.phase).toBe('paused');
    const shown = formatStatus({ rollouts: (await h.status()).rollouts, now: Date.now() }, { wide: true });
    expect(shown).toMatch(/production@19\.470-4.*\n?.*rolled back in canary/);
  }, 120_000);
});
