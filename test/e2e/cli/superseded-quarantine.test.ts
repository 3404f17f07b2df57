/**
 * A superseded rollout with a quarantined cohort, through the built CLI (run `npm run build`
 * first) against the test Redis (issue #20): `status` does not suggest `retry ... --only
 * quarantined`, which `retry` refuses there (exit 3); while the rollout could still be retried,
 * it does suggest it. The rollout is written by the real store, as the scheduler would.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { exitOf, type Harness, startHarness } from '../../support/rollout-harness.js';
import { TEST_SETTINGS as SETTINGS } from '../../support/rollout-settings.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function cli(h: Harness, args: string[]): Promise<{ code: number | null; out: string }> {
  const child = h.spawnCli(args);
  const code = await exitOf(child, 30_000);
  return { code, out: child.output() };
}

describe('a quarantined cohort in status', () => {
  it('is released by retry while the rollout runs, and no retry is suggested once it is superseded', async () => {
    harness = await startHarness({
      timeScale: 60,
      fleet: {
        builds: ['19.400-5', '19.470-4'],
        users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
        collectors: [{ id: 1, version: '19.400-5' }],
      },
      policy: { name: 'web' },
    });
    const h = harness;
    const now = Date.now();
    const { rollout } = await h.state.rollouts.start({
      policy: 'web',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 10,
      settings: SETTINGS,
      now,
    });
    const held = [{ cohort: 'osName=Mac OS X', reason: '4 of 5 upgrades failed', at: now, held: 8 }];
    expect(
      await h.state.rollouts.write(rollout, { phase: 'running', patch: { quarantined: held } }, now),
    ).toBeDefined();
    const running = await cli(h, ['status']);
    // (How many it holds is counted from its Collectors' records: none were written here.)
    expect(running.out.replace(/\s+/g, ' ')).toMatch(
      /quarantined: cohort osName=Mac OS X \(\d+ held\) — `fleet-upgrade retry web@19\.470-4 --only quarantined` releases/,
    );

    expect(await h.state.rollouts.move(rollout, 'supersede', now)).toBe('superseded');
    const superseded = await cli(h, ['status']);
    expect(superseded.code, superseded.out).toBe(0);
    expect(superseded.out).not.toMatch(/retry/);
    expect(superseded.out.replace(/\s+/g, ' ')).toMatch(
      /quarantined: cohort osName=Mac OS X \(\d+ held\), never released: the rollout is superseded, the newer build's rollout decides them/,
    );
    // What status no longer suggests is what retry refuses.
    const retried = await cli(h, ['retry', 'web@19.470-4', '--only', 'quarantined']);
    expect(retried.code).toBe(3);
    expect(retried.out).toMatch(/is superseded: its Collectors can no longer be retried/);
  }, 60_000);
});
